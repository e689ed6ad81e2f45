-- own_transaction: the start of a routine that runs a transaction of its own, included by the
-- line `-- @include own_transaction NAME` (src/migrate/routines.rs, Routine::text), right after
-- the routine's declarations: what the caller left open is committed first, and inside an XA
-- transaction, whose COMMIT the server refuses (1399), the call is refused before it reads
-- anything, as NAME (leader_election_refuse_xa: 45000). From then on v_own, which the routine
-- declares (BOOLEAN DEFAULT FALSE), says that its handlers roll back what is the call's own.
BEGIN
    DECLARE EXIT HANDLER FOR 1399 CALL leader_election_refuse_xa('{arg}');
    COMMIT;
END;
SET v_own = TRUE;
