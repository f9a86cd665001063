package dev.selene.transport.disk;

import net.jqwik.api.lifecycle.LifecycleContext;
import net.jqwik.api.lifecycle.SkipExecutionHook;

/** Skips a jqwik container, naming why, where {@link NativeIo} (O_DIRECT) is unavailable. */
final class RequiresNativeIo implements SkipExecutionHook {

    @Override
    public SkipResult shouldBeSkipped(LifecycleContext context) {
        return NativeIo.isAvailable() ? SkipResult.doNotSkip()
                : SkipResult.skip("native I/O is unavailable: " + NativeIo.unavailabilityCause());
    }
}
