package io.mysqlleader.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs the annotated method only while this node leads (the auto-configured
 * {@link io.mysqlleader.Elector}'s {@code isLeader()}, asked at each invocation): on any other
 * node the invocation is skipped (logged at debug under {@code io.mysqlleader.spring.LeaderOnly})
 * and returns {@code null}, or zero / {@code false} for a primitive. Meant for
 * {@code @Scheduled} methods:
 *
 * <pre>{@code
 * @Component
 * class Billing {
 *     @LeaderOnly
 *     @Scheduled(fixedDelay = 5000)
 *     void chargeDueInvoices() { ... }   // on one node of the cluster at a time
 * }
 * }</pre>
 *
 * <p>On a class, it applies to every method of the bean. The bean is proxied (a CGLIB subclass,
 * as for {@code @Transactional}): calls from inside the bean itself are not checked. Leadership
 * can end while the body runs: fence database writes with
 * {@link io.mysqlleader.Elector#fence(java.sql.Connection)}, which applies the current leader's term.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@Documented
public @interface LeaderOnly {
}
