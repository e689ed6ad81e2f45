-- whole_lists: the start of a routine that builds lists with JSON_ARRAYAGG, included by the line
-- `-- @include whole_lists VAR` before its first list is checked or built. MariaDB cuts
-- JSON_ARRAYAGG (and GROUP_CONCAT) at the session's group_concat_max_len, which any caller may
-- set (down to 4 bytes), with only a warning (1260); the cut array is still valid JSON, and its
-- last id a prefix of a listed one: another service, maybe another tenant's, that no access
-- check saw (a limited account took another tenant's seat so, MariaDB 10.11, 2026-11-30;
-- MySQL 9.7's JSON_ARRAYAGG is never cut). So the routine raises the limit to 4 GiB (beyond any
-- LONGTEXT list) for the call, and keeps the caller's value in VAR (a BIGINT UNSIGNED it
-- declares), which every way out of the routine puts back: its end, and its handlers when VAR
-- IS NOT NULL (tests/sql_access.rs, a_callers_group_concat_max_len_cuts_no_list).
SET {arg} = @@session.group_concat_max_len;
SET SESSION group_concat_max_len = 4294967295;
