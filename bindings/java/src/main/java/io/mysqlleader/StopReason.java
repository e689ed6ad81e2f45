package io.mysqlleader;

/** Why a node stopped leading ({@code mysqlleader_stop_reason}). */
public enum StopReason {
    /** Not a stop. */
    NONE(0, "none"),
    /** Another node holds the seat (forced out, the lease lapsed and was taken, or a fence was refused). */
    LOST_SEAT(1, "lost_seat"),
    /** No renew succeeded before the local deadline. */
    DEADLINE_PASSED(2, "deadline_passed"),
    /** This node resigned. */
    RESIGNED(3, "resigned"),
    /** The elector was closed. */
    SHUTDOWN(4, "shutdown"),
    /** The elector's background task failed. */
    FAILED(5, "failed"),
    /**
     * The term ended by a handover ({@link Elector#handover(String)}, or an operator's
     * {@link Client#handover(String, String)} seen at the next renew); the elector goes on as a follower.
     */
    HANDED_OVER(6, "handed_over");

    final int code;
    /** The library's name of the reason ({@code "lost_seat"}, ...). */
    public final String label;

    StopReason(int code, String label) {
        this.code = code;
        this.label = label;
    }

    static StopReason of(int code) {
        for (StopReason r : values()) {
            if (r.code == code) return r;
        }
        return FAILED;
    }
}
