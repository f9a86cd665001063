package dev.selene.transport.disk;

import java.nio.file.Path;

/** A second "node" for {@link DirectoryLockTest}: locks the directory in args[0], says so, and holds it until stdin closes. */
public final class LockHolder {

    private LockHolder() {
    }

    public static void main(String[] args) throws Exception {
        try (DirectoryLock lock = DirectoryLock.acquire(Path.of(args[0]))) {
            if (!lock.isHeld()) {
                throw new IllegalStateException("lock on " + lock.directory() + " not held");
            }
            System.out.println("locked " + ProcessHandle.current().pid());
            System.out.flush();
            while (System.in.read() >= 0) {
                Thread.onSpinWait();
            }
        }
    }
}
