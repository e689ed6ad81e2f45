package io.mysqlleader;

import java.time.Duration;

/**
 * A leadership change as the library reports it ({@code mysqlleader_event}), delivered to
 * {@link Elector#addListener} on the elector's callback thread, in order.
 *
 * @param kind what happened
 * @param term the term the event is about
 * @param reason for {@link Kind#STOPPED_LEADING}; {@link StopReason#NONE} otherwise
 * @param leaderId this node for {@code STARTED_LEADING}; the new leader, or null for a vacant seat, for {@code LEADER_CHANGED}; null otherwise
 * @param validFor for {@code STARTED_LEADING}: how long this node may act as leader without a renew
 * @param missed for {@code MISSED}: how many events were dropped because listeners fell behind
 * @param failure for {@code FAILING}: the kind of the error the elector's calls fail with
 *        ({@link ErrorKind#AUTHENTICATION}, {@link ErrorKind#PRIVILEGE}, ...); null otherwise
 */
public record ElectorEvent(Kind kind, long term, StopReason reason, String leaderId, Duration validFor, long missed,
                           ErrorKind failure) {
    /** What happened ({@code mysqlleader_event_kind}). */
    public enum Kind {
        /** This node became leader at {@code term}. */
        STARTED_LEADING,
        /** This node stopped leading {@code term}, for {@code reason}. */
        STOPPED_LEADING,
        /** Another leader, a vacant seat, or a new term was seen. */
        LEADER_CHANGED,
        /** Events were dropped; ask the elector for its state. */
        MISSED,
        /** The elector's background task failed; it no longer campaigns. The last event. */
        ELECTOR_STOPPED,
        /**
         * The elector's calls fail with an error retrying cannot fix ({@code failure}: a refused
         * login, a missing grant, the schema not installed, a service outside the account's
         * patterns). Sent once per change of condition; the elector keeps trying and leads once
         * the set-up is mended.
         */
        FAILING;

        static Kind of(int code) {
            return switch (code) {
                case 1 -> STARTED_LEADING;
                case 2 -> STOPPED_LEADING;
                case 3 -> LEADER_CHANGED;
                case 4 -> MISSED;
                case 6 -> FAILING;
                default -> ELECTOR_STOPPED;
            };
        }
    }
}
