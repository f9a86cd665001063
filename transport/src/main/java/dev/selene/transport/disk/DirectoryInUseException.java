package dev.selene.transport.disk;

import java.io.IOException;
import java.nio.file.Path;
import java.util.OptionalLong;

/** Another Selene node (another process, or another tier in this one) holds the disk tier's directory. */
public final class DirectoryInUseException extends IOException {

    private final transient Path directory;
    private final long holderPid;

    DirectoryInUseException(Path directory, long holderPid, boolean sameProcess) {
        super("directory " + directory + " is already used by another Selene node "
                + (sameProcess ? "in this process " : "") + "(pid " + (holderPid > 0 ? holderPid : "unknown")
                + "); stop that node or give this one another directory");
        this.directory = directory;
        this.holderPid = holderPid;
    }

    /** The directory that is in use. */
    public Path directory() {
        return directory;
    }

    /** The process holding it, when its lock file names one. */
    public OptionalLong holderPid() {
        return holderPid > 0 ? OptionalLong.of(holderPid) : OptionalLong.empty();
    }
}
