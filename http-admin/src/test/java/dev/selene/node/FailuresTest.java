package dev.selene.node;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class FailuresTest {

    @Test
    void root_unwrapsNestedFutureWrappers_butNotOtherCauses() {
        TimeoutException timeout = new TimeoutException("no answer");
        IllegalStateException outer = new IllegalStateException("outer", timeout);
        assertSame(timeout, Failures.root(new ExecutionException(new CompletionException(timeout))));
        assertSame(outer, Failures.root(new CompletionException(outer)), "only the futures' wrappers come off");
        CompletionException empty = new CompletionException(null);
        assertSame(empty, Failures.root(empty), "a wrapper with no cause is the root");
    }

    @Test
    void message_isTheRootsMessage_orItsClassNameWhenItHasNone() {
        assertEquals("no answer", Failures.message(new CompletionException(new TimeoutException("no answer"))));
        assertEquals("TimeoutException", Failures.message(new ExecutionException(new TimeoutException())));
    }
}
