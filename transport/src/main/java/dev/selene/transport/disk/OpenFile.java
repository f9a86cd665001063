package dev.selene.transport.disk;

import java.nio.file.Path;

/** An open file descriptor and the path it was opened at (for messages). */
record OpenFile(int fd, Path path) {
}
