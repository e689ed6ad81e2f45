package io.mysqlleader.spring;

import io.mysqlleader.Elector;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.aop.Pointcut;
import org.springframework.aop.framework.autoproxy.AbstractBeanFactoryAwareAdvisingPostProcessor;
import org.springframework.aop.support.ComposablePointcut;
import org.springframework.aop.support.DefaultPointcutAdvisor;
import org.springframework.aop.support.annotation.AnnotationMatchingPointcut;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.core.Ordered;

import java.util.function.Supplier;

/**
 * Proxies the beans with {@link LeaderOnly} methods (or the annotation on the class) so that
 * each call runs only while the {@link Elector} bean leads. Runs before Spring's
 * {@code ScheduledAnnotationBeanPostProcessor}, so that a {@code @Scheduled} method is scheduled
 * on the proxy; joins an existing proxy's advisors (e.g. {@code @Transactional}'s) in front.
 * Looks the elector up at the first call, so the proxy never makes it early.
 */
public class LeaderOnlyBeanPostProcessor extends AbstractBeanFactoryAwareAdvisingPostProcessor {
    /** Before {@code ScheduledAnnotationBeanPostProcessor} ({@code LOWEST_PRECEDENCE}). */
    public static final int ORDER = Ordered.LOWEST_PRECEDENCE - 100;
    /** The calls of the proxied methods running now (the lifecycle waits for them at shutdown). */
    private final LeaderOnlyCalls calls = new LeaderOnlyCalls();

    public LeaderOnlyBeanPostProcessor() {
        setProxyTargetClass(true);
        setBeforeExistingAdvisors(true);
        setOrder(ORDER);
    }

    @Override
    public void setBeanFactory(BeanFactory beanFactory) {
        super.setBeanFactory(beanFactory);
        Pointcut pointcut = new ComposablePointcut(new AnnotationMatchingPointcut(LeaderOnly.class, true))
                .union(new AnnotationMatchingPointcut(null, LeaderOnly.class, true));
        this.advisor = new DefaultPointcutAdvisor(pointcut, new Interceptor(() -> beanFactory.getBean(Elector.class), calls));
    }

    /** The calls of the proxied methods running now. */
    public LeaderOnlyCalls calls() {
        return calls;
    }

    /**
     * Proceeds while the elector leads and the context is not shutting down (counted in
     * {@link LeaderOnlyCalls} meanwhile); otherwise skips the call (debug log) and returns null or
     * the primitive default.
     */
    static final class Interceptor implements MethodInterceptor {
        private static final Log LOG = LogFactory.getLog(LeaderOnly.class);
        private final Supplier<Elector> electorSupplier;
        private final LeaderOnlyCalls calls;
        private volatile Elector elector;

        Interceptor(Supplier<Elector> electorSupplier, LeaderOnlyCalls calls) {
            this.electorSupplier = electorSupplier;
            this.calls = calls;
        }

        @Override
        public Object invoke(MethodInvocation invocation) throws Throwable {
            Elector e = elector;
            if (e == null) {
                e = electorSupplier.get();
                elector = e;
            }
            if (e.isLeader() && calls.enter()) {
                try {
                    return invocation.proceed();
                } finally {
                    calls.exit();
                }
            }
            if (LOG.isDebugEnabled()) {
                LOG.debug("skipped " + invocation.getMethod().getDeclaringClass().getSimpleName() + "." + invocation.getMethod().getName()
                        + ": node " + e.nodeId() + " does not lead service " + e.serviceId() + " (leader: " + e.leaderId() + ")");
            }
            return defaultValue(invocation.getMethod().getReturnType());
        }

        private static Object defaultValue(Class<?> type) {
            if (!type.isPrimitive() || type == void.class) return null;
            if (type == boolean.class) return false;
            if (type == char.class) return '\0';
            if (type == byte.class) return (byte) 0;
            if (type == short.class) return (short) 0;
            if (type == int.class) return 0;
            if (type == long.class) return 0L;
            if (type == float.class) return 0f;
            return 0d;
        }
    }
}
