<?php
/**
 * The benchmark's competitor (issue 5): the same questions answered by a small
 * WordPress REST route, written the way a WordPress developer would: one query
 * with a join for the slug (no N+1), dates in the site's zone with DateTime,
 * the answer built as an array and sent by the REST server. A must-use plugin.
 */
add_action('rest_api_init', function () {
	register_rest_route('booking-calendar-bench/v1', '/slots', [
		'methods' => 'GET', 'permission_callback' => '__return_true', 'callback' => 'bcb_slots',
	]);
	register_rest_route('booking-calendar-bench/v1', '/disabled-time', [
		'methods' => 'GET', 'permission_callback' => '__return_true', 'callback' => 'bcb_disabled_time',
	]);
});

function bcb_slots(WP_REST_Request $request) {
	global $wpdb;
	$where = ['1=1'];
	$args = [];
	if ($request['service']) { $where[] = 'b.service_id = %d'; $args[] = (int) $request['service']; }
	if ($request['status']) {
		$statuses = array_map('trim', explode(',', strtolower($request['status'])));
		$where[] = 'b.status IN (' . implode(',', array_fill(0, count($statuses), '%s')) . ')';
		array_push($args, ...$statuses);
	}
	if ($request['start']) { $where[] = 'b.booking_date >= %s'; $args[] = $request['start']; }
	if ($request['end']) { $where[] = 'b.booking_date <= %s'; $args[] = $request['end']; }
	$flat = $request->has_param('flat');
	$order = $flat ? 'b.booking_date, b.time_from, b.id' : 'b.service_id, b.booking_date, b.time_from, b.id';
	$sql = "SELECT b.*, p.post_name FROM {$wpdb->prefix}booking_calendar_bookings b
		LEFT JOIN {$wpdb->posts} p ON p.ID = b.service_id AND p.post_type = 'bc_service'
		WHERE " . implode(' AND ', $where) . " ORDER BY $order";
	$rows = $wpdb->get_results($args ? $wpdb->prepare($sql, $args) : $sql, ARRAY_A);
	$tz = wp_timezone();
	$out = [];
	foreach ($rows as $r) {
		$start = new DateTimeImmutable($r['booking_date'] . ' ' . ($r['time_from'] ?? '00:00:00'), $tz);
		if ($r['time_from'] === null) {
			$end = $start->modify('+1 day');
		} elseif ($r['time_to'] === null) {
			$end = null;
		} else {
			$end = new DateTimeImmutable($r['booking_date'] . ' ' . $r['time_to'], $tz);
			if ($r['time_to'] < $r['time_from']) $end = $end->modify('+1 day');
		}
		$record = [
			'id' => (int) $r['id'],
			'service_id' => (int) $r['service_id'],
			'service_slug' => $r['post_name'] === null ? null : urldecode(preg_replace('/__trashed$/', '', $r['post_name'])),
			'status' => strtolower(trim($r['status'])),
			'booking_date' => $r['booking_date'],
			'start' => $start->format('c'),
			'end' => $end ? $end->format('c') : null,
			'all_day' => $r['time_from'] === null,
			'created_date' => $r['created_at'] === '0000-00-00 00:00:00' ? null : (new DateTimeImmutable($r['created_at'], $tz))->format('c'),
			'customer' => null,
			'note' => $r['note'],
		];
		if ($flat) $out[] = $record; else $out[(string) $r['service_id']][] = $record;
	}
	$response = rest_ensure_response(['booked_slots' => $flat ? $out : (object) $out, 'total' => count($rows)]);
	$response->header('X-WP-Total', (string) count($rows));
	return $response;
}

function bcb_disabled_time(WP_REST_Request $request) {
	global $wpdb;
	$rules = $wpdb->get_results($wpdb->prepare(
		"SELECT * FROM {$wpdb->prefix}booking_calendar_disabled_times WHERE service_id IN (%d, 0) ORDER BY id", (int) $request['service']), ARRAY_A);
	$tz = wp_timezone();
	$from = new DateTimeImmutable('today', $tz);
	$to = $from->modify('+3 months');
	$periods = [];
	foreach ($rules as $r) {
		$days = [];
		if ($r['rule_type'] === 'weekly' && $r['weekday'] !== null) {
			for ($d = $from->modify('-1 day'); $d <= $to; $d = $d->modify('+1 day')) {
				if ((int) $d->format('w') !== (int) $r['weekday']) continue;
				if ($r['date_from'] && $d->format('Y-m-d') < $r['date_from']) continue;
				if ($r['date_to'] && $d->format('Y-m-d') > $r['date_to']) continue;
				$days[] = $d;
			}
		} elseif ($r['rule_type'] === 'date' && $r['date_from']) {
			$last = new DateTimeImmutable($r['date_to'] ?: $r['date_from'], $tz);
			if ($r['time_from'] === null) {
				$periods[] = bcb_period($r, new DateTimeImmutable($r['date_from'], $tz), $last->modify('+1 day'), $from, $to);
				continue;
			}
			for ($d = new DateTimeImmutable($r['date_from'], $tz); $d <= $last; $d = $d->modify('+1 day')) $days[] = $d;
		}
		foreach ($days as $d) {
			$day = $d->format('Y-m-d');
			$s = new DateTimeImmutable($day . ' ' . ($r['time_from'] ?? '00:00:00'), $tz);
			$e = $r['time_from'] === null ? $s->modify('+1 day') : new DateTimeImmutable($day . ' ' . $r['time_to'], $tz);
			if ($r['time_from'] !== null && $r['time_to'] < $r['time_from']) $e = $e->modify('+1 day');
			$periods[] = bcb_period($r, $s, $e, $from, $to);
		}
	}
	$periods = array_values(array_filter($periods));
	usort($periods, fn($a, $b) => [$a['start'], $a['service_id'] ?? 0, $a['rule_id']] <=> [$b['start'], $b['service_id'] ?? 0, $b['rule_id']]);
	return ['disabled_times' => $periods, 'start' => $from->format('Y-m-d'), 'end' => $to->format('Y-m-d'), 'timezone' => wp_timezone_string(), 'total' => count($periods)];
}

function bcb_period($r, $s, $e, $from, $to) {
	$limit = $to->modify('+1 day');
	if ($s >= $limit || $e <= $from) return null;
	return [
		'rule_id' => (int) $r['id'], 'service_id' => (int) $r['service_id'] ?: null, 'type' => $r['rule_type'],
		'start' => max($s, $from)->format('c'), 'end' => min($e, $limit)->format('c'), 'all_day' => $r['time_from'] === null, 'note' => $r['note'],
	];
}
