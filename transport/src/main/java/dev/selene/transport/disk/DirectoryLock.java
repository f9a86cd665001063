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
 * {@value #LOCK_FILE_NAME}, which names the holder's pid, plus a registry of the directories held in this process.
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
    private final AtomicBoolean closed = new AtomicBoolean();

    private DirectoryLock(Path directory, FileChannel channel, FileLock lock) {
        this.directory = directory;
        this.channel = channel;
        this.lock = lock;
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
        try {
            Path lockFile = real.resolve(LOCK_FILE_NAME);
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
            return new DirectoryLock(real, channel, lock);
        } catch (IOException | RuntimeException e) {
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
                HELD_IN_THIS_PROCESS.remove(directory);
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
