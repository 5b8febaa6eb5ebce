# Sourced (not run: this file is not executable) by the official MariaDB
# image's entrypoint on its first start, once MARIADB_DATABASE exists, with the
# entrypoint's helpers docker_process_sql and docker_sql_escape_string_literal.
# Creates the account booking-calendar-api reads with: SELECT on the WordPress
# database and nothing else. The service's sessions are read-only besides.
: "${BOOKING_API_DB_USER:?BOOKING_API_DB_USER must name the read-only account of booking-calendar-api}"
: "${BOOKING_API_DB_PASSWORD:?BOOKING_API_DB_PASSWORD must be set}"
: "${MARIADB_DATABASE:?MARIADB_DATABASE must name the WordPress database}"

booking_api_user=$(docker_sql_escape_string_literal "$BOOKING_API_DB_USER")
booking_api_password=$(docker_sql_escape_string_literal "$BOOKING_API_DB_PASSWORD")
booking_api_database=${MARIADB_DATABASE//\`/\`\`}

docker_process_sql --database=mysql <<-EOSQL
	CREATE USER IF NOT EXISTS '${booking_api_user}'@'%' IDENTIFIED BY '${booking_api_password}';
	GRANT SELECT ON \`${booking_api_database}\`.* TO '${booking_api_user}'@'%';
EOSQL
