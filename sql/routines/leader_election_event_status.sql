-- leader_election_event_status: the optional expiry event and the server's scheduler that runs
-- it, for `mysqlleader event status`: installed and event_enabled (0 or 1), event_scheduler
-- (ON, OFF or DISABLED: the event runs only when ON), last_executed (UTC text or NULL). Runs
-- with its definer's rights, so the operator and observer roles need no EVENT privilege.
CREATE PROCEDURE leader_election_event_status()
    READS SQL DATA
    SQL SECURITY DEFINER
    COMMENT 'mysqlleader: the expiry event''s state (event status; a read)'
BEGIN
    SELECT COUNT(ev.EVENT_NAME) AS installed,
           COALESCE(MAX(ev.STATUS = 'ENABLED'), 0) AS event_enabled,
           CAST(@@GLOBAL.event_scheduler AS CHAR) AS event_scheduler,
           DATE_FORMAT(MAX(ev.LAST_EXECUTED), '%Y-%m-%dT%H:%i:%sZ') AS last_executed
      FROM (SELECT 1 AS one) AS one
      LEFT JOIN information_schema.EVENTS ev
        ON ev.EVENT_SCHEMA = DATABASE() AND ev.EVENT_NAME = 'leader_election_expire';
END;
