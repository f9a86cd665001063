package dev.selene.transport.disk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * An exclusive hold on the disk tier's directory, so that two nodes never share one (recovery): an OS lock on
 * {@value #LOCK_FILE_NAME}, which names the holder's pid, a {@code flock} on the directory itself (which deleting the
 * lock file does not undo), plus a registry of the directories held in this process.
 *
 * <p>The OS lock is a POSIX record lock ({@link FileChannel#tryLock()}); the kernel drops it when the process
 * dies, so a crashed node never leaves the directory locked. POSIX drops a process's lock when <em>any</em>
 * descriptor of the file closes, so this class never opens the lock file of a directory it already holds. The
 * lock file is left in place on release: deleting it would race with the next node opening it.
 */
public final class DirectoryLock implements AutoCloseable {

    /** Name of the lock file inside the locked directory. */
    public static final String LOCK_FILE_NAME = "selene.lock";

    private static final Set<Path> HELD_IN_THIS_PROCESS = ConcurrentHashMap.newKeySet();

    private final Path directory;
    private final FileChannel channel;
    private final FileLock lock;
    /** The descriptor of the directory's own lock, or -1 where native calls are unavailable. */
    private final int directoryFd;
    private final AtomicBoolean closed = new AtomicBoolean();

    private DirectoryLock(Path directory, FileChannel channel, FileLock lock, int directoryFd) {
        this.directory = directory;
        this.channel = channel;
        this.lock = lock;
        this.directoryFd = directoryFd;
    }

    /**
     * Creates {@code dir} if needed and locks it.
     *
     * @throws DirectoryInUseException when another node, in this process or another, holds it
     */
    public static DirectoryLock acquire(Path dir) throws IOException {
        Files.createDirectories(dir);
        Path real = dir.toRealPath();
        long pid = ProcessHandle.current().pid();
        if (!HELD_IN_THIS_PROCESS.add(real)) {
            throw new DirectoryInUseException(real, pid, true);
        }
        int directoryFd = -1;
        try {
            Path lockFile = real.resolve(LOCK_FILE_NAME);
            if (NativeIo.isAvailable()) {
                // The directory itself is locked too: a lock file deleted under a running node (it looks like a
                // leftover) must not let a second node in. A file system that cannot lock a directory this way
                // (NFS emulates it with a lock a read-only descriptor cannot take) keeps the lock file's alone.
                try {
                    directoryFd = NativeIo.lockDirectory(real);
                } catch (NativeIoException e) {
                    directoryFd = -1;
                }
                if (directoryFd == NativeIo.LOCKED_ELSEWHERE) {
                    directoryFd = -1;
                    throw new DirectoryInUseException(real, holderPid(lockFile), false);
                }
            }
            FileChannel channel = FileChannel.open(lockFile, StandardOpenOption.CREATE, StandardOpenOption.READ,
                    StandardOpenOption.WRITE);
            FileLock lock;
            try {
                lock = channel.tryLock();
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
            if (lock == null) {
                channel.close();
                throw new DirectoryInUseException(real, holderPid(lockFile), false);
            }
            try {
                byte[] owner = ("pid=" + pid + "\nsince=" + Instant.now() + "\n").getBytes(StandardCharsets.UTF_8);
                channel.truncate(0);
                channel.write(ByteBuffer.wrap(owner), 0);
                channel.force(true);
            } catch (IOException | RuntimeException e) {
                channel.close();
                throw e;
            }
            return new DirectoryLock(real, channel, lock, directoryFd);
        } catch (IOException | RuntimeException e) {
            closeDirectory(directoryFd, real);
            HELD_IN_THIS_PROCESS.remove(real);
            throw e;
        }
    }

    /** The locked directory (its real path). */
    public Path directory() {
        return directory;
    }

    /** Whether this hold is still in force. */
    public boolean isHeld() {
        return !closed.get() && lock.isValid();
    }

    /** Releases the directory; idempotent. */
    @Override
    public void close() throws IOException {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        try {
            lock.release();
        } finally {
            try {
                channel.close();
            } finally {
                closeDirectory(directoryFd, directory);
                HELD_IN_THIS_PROCESS.remove(directory);
            }
        }
    }

    private static void closeDirectory(int fd, Path dir) {
        if (fd >= 0) {
            try {
                NativeIo.close(fd, dir);
            } catch (NativeIoException e) {
                // the descriptor is released even so
            }
        }
    }

    @Override
    public String toString() {
        return "DirectoryLock[" + directory + (isHeld() ? "" : ", released") + "]";
    }

    private static long holderPid(Path lockFile) {
        try {
            for (String line : Files.readAllLines(lockFile, StandardCharsets.UTF_8)) {
                if (line.startsWith("pid=")) {
                    return Long.parseLong(line.substring(4).trim());
                }
            }
        } catch (IOException | NumberFormatException e) {
            return -1;
        }
        return -1;
    }
}
