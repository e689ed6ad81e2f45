-- benches/election/before_40/leader_election_refuse_xa.sql: sql/routines/leader_election_refuse_xa.sql as it was before issue 40 touched it,
-- copied byte for byte from git (`git show 5085e36^:sql/routines/leader_election_refuse_xa.sql`, commit 1c2869c).
-- The benchmark installs it over the migrated schema in mysqlleader_bench_before40 (like
-- campaign (V6)), so that follower, renew and fence measure it side by side with the tree.
-- Not part of the schema; do not edit (it is a record).
-- Raises the refusal of a call made inside an XA transaction: SQLSTATE 45000, naming the
-- procedure. Internal; reads and writes nothing. Only called on that path: a procedure that
-- runs a transaction of its own ends the caller's open one first (COMMIT), which an XA
-- transaction refuses with 1399; assert_leader asks leader_election_probe_xa.
CREATE PROCEDURE leader_election_refuse_xa(IN p_name VARCHAR(32))
    NO SQL
    SQL SECURITY INVOKER
    COMMENT 'mysqlleader internal: 45000 inside an XA transaction'
BEGIN
    DECLARE v_msg VARCHAR(128);
    SET v_msg = CONCAT('mysqlleader: ', p_name, ' cannot run inside an XA transaction (XA PREPARE would drop its locks)');
    SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = v_msg;
END;
