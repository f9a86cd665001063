package dev.selene.transport.disk;

import java.io.IOException;
import java.nio.file.Path;

/** A failed system call on a file, carrying the C library's {@code errno} (EIO, ENOSPC, EINVAL, ...). */
public final class NativeIoException extends IOException {

    private final String operation;
    private final transient Path file;
    private final int errno;

    /**
     * A failure of {@code operation} (e.g. "pwrite of 65536 bytes at offset 4096 to") on {@code file} with
     * {@code errno}; the message reads "{operation} {file} failed: ENOSPC (no space left on device)".
     */
    public NativeIoException(String operation, Path file, int errno) {
        super(operation + " " + file + " failed: " + errnoName(errno) + " (" + describe(errno) + ")");
        this.operation = operation;
        this.file = file;
        this.errno = errno;
    }

    /** The C library's error number. */
    public int errno() {
        return errno;
    }

    /** The error's symbolic name, e.g. {@code ENOSPC}. */
    public String errnoName() {
        return errnoName(errno);
    }

    /** What was being done, e.g. "fsync of". */
    public String operation() {
        return operation;
    }

    /** The file or directory the call was about. */
    public Path file() {
        return file;
    }

    /** Symbolic name of a Linux error number, or {@code errno N} for one this class does not name. */
    public static String errnoName(int errno) {
        return switch (errno) {
            case 1 -> "EPERM";
            case 2 -> "ENOENT";
            case 4 -> "EINTR";
            case 5 -> "EIO";
            case 9 -> "EBADF";
            case 11 -> "EAGAIN";
            case 12 -> "ENOMEM";
            case 13 -> "EACCES";
            case 16 -> "EBUSY";
            case 17 -> "EEXIST";
            case 18 -> "EXDEV";
            case 20 -> "ENOTDIR";
            case 21 -> "EISDIR";
            case 22 -> "EINVAL";
            case 24 -> "EMFILE";
            case 27 -> "EFBIG";
            case 28 -> "ENOSPC";
            case 30 -> "EROFS";
            case 36 -> "ENAMETOOLONG";
            case 95 -> "EOPNOTSUPP";
            case 122 -> "EDQUOT";
            default -> "errno " + errno;
        };
    }

    /** A short explanation of a Linux error number, with what usually causes it on the disk tier. */
    public static String describe(int errno) {
        return switch (errno) {
            case 1, 13 -> "permission denied";
            case 2 -> "no such file or directory";
            case 5 -> "input/output error: the device reported a failure";
            case 9 -> "bad file descriptor";
            case 12 -> "out of memory";
            case 17 -> "file exists";
            case 20 -> "not a directory";
            case 21 -> "is a directory";
            case 22 -> "invalid argument: O_DIRECT needs 4096-aligned memory, offsets and lengths, and a filesystem "
                    + "that supports direct I/O (tmpfs does not)";
            case 24 -> "too many open files";
            case 27 -> "file too large";
            case 28 -> "no space left on device";
            case 30 -> "read-only file system";
            case 36 -> "file name too long";
            case 95 -> "operation not supported by this filesystem";
            case 122 -> "disk quota exceeded";
            default -> "see errno(3)";
        };
    }
}
