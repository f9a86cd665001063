package dev.selene.transport.gpu;

import jcuda.NativePointerObject;
import jcuda.Pointer;
import jcuda.driver.CUdeviceptr;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Converts between raw 64-bit addresses and JCuda's pointer objects, which expose no public way to wrap or read an
 * address.
 *
 * <p>A JCuda {@link Pointer} that holds neither a buffer nor an array is passed to CUDA as
 * {@code nativePointer + byteOffset} (JCuda's {@code PointerUtils}); these helpers set {@code nativePointer} to the
 * address and leave the offset 0, so that calls which read only {@code nativePointer} see it too. The fields are
 * reached through {@link MethodHandles#privateLookupIn}, which works because JCuda's jar is on the class path (an
 * unnamed module, open to everyone).
 */
final class CudaPointers {

    private static final VarHandle NATIVE_POINTER;
    private static final VarHandle BYTE_OFFSET;

    static {
        try {
            NATIVE_POINTER = MethodHandles.privateLookupIn(NativePointerObject.class, MethodHandles.lookup())
                    .findVarHandle(NativePointerObject.class, "nativePointer", long.class);
            BYTE_OFFSET = MethodHandles.privateLookupIn(Pointer.class, MethodHandles.lookup())
                    .findVarHandle(Pointer.class, "byteOffset", long.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError("this JCuda version hides its pointer fields differently: " + e);
        }
    }

    private CudaPointers() {
    }

    /** A pointer to host memory at {@code address}. */
    static Pointer host(long address) {
        return new HostPointer(address);
    }

    /** A device pointer at {@code address}. */
    static CUdeviceptr device(long address) {
        CUdeviceptr pointer = new CUdeviceptr();
        NATIVE_POINTER.set((NativePointerObject) pointer, address);
        return pointer;
    }

    /** The address {@code pointer} stands for: its native pointer plus its byte offset. */
    static long address(Pointer pointer) {
        return (long) NATIVE_POINTER.get((NativePointerObject) pointer) + (long) BYTE_OFFSET.get(pointer);
    }

    /** A {@link Pointer} built on the protected address constructor. */
    private static final class HostPointer extends Pointer {
        HostPointer(long address) {
            super(address);
        }
    }
}
