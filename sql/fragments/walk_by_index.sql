-- walk_by_index: what a routine's walk over a JSON array of service ids reads its ids from, in
-- place of JSON_EXTRACT(list, '$[i]') at each seat, which parses the whole list at every read:
-- about 30 ms of a 500-seat call on both servers (2026-11-30). Included by the line
-- `-- @include walk_by_index LIST` before the walk; the routine declares v_walk (LONGTEXT
-- CHARACTER SET ascii) and v_w (INT). v_walk holds each id of LIST, in the list's order, as the
-- hex digits of its bytes padded with spaces to v_w characters (twice the longest id's bytes),
-- so that id i (from 0) is read in constant time at its seat:
--   SET v_sid = UNHEX(RTRIM(SUBSTRING(v_walk, v_i * v_w + 1, v_w)));
-- Read in two statements (no cursor: a cursor's FETCH cut by KILL QUERY on MySQL 9.7 ended the
-- call with 1329, No data, outside its handler, CI79). GROUP_CONCAT is cut at
-- group_concat_max_len: only include it after whole_lists.
-- Measured side by side (10,000 seats in 20 calls of 500 through one `mysql` client, 3 rounds,
-- the routines before and after, 2026-11-30): campaign_seats 0.74x and resign_seats 0.71x of
-- the time on MariaDB 10.11 (0.82 s against 1.11 s, 0.88 s against 1.24 s), 0.67x and 0.73x
-- on MySQL 9.7 (1.07 s against 1.60 s, 1.27 s against 1.75 s).
SELECT COALESCE(MAX(LENGTH(CAST(j.sid AS BINARY))), 0) * 2 INTO v_w
  FROM JSON_TABLE({arg}, '$[*]' COLUMNS (sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j;
SELECT GROUP_CONCAT(RPAD(HEX(CAST(j.sid AS BINARY)), v_w, ' ') ORDER BY j.n SEPARATOR '') INTO v_walk
  FROM JSON_TABLE({arg}, '$[*]' COLUMNS (n FOR ORDINALITY, sid VARCHAR(128) CHARACTER SET utf8mb4 PATH '$')) AS j;
