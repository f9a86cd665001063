package dev.selene.transport.disk;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * A directory under the module's {@code target/disk-tests/} for tests outside JUnit Jupiter's {@code @TempDir}
 * (jqwik properties), removed with everything in it on close. Under {@code target/} because O_DIRECT needs a disk
 * file system, and {@code /tmp} is tmpfs on many machines.
 */
final class ScratchDirectory implements AutoCloseable {

    private final Path path;

    private ScratchDirectory(Path path) {
        this.path = path;
    }

    static ScratchDirectory create(String prefix) throws IOException {
        Path root = Files.createDirectories(Path.of("target", "disk-tests").toAbsolutePath());
        return new ScratchDirectory(Files.createTempDirectory(root, prefix));
    }

    Path path() {
        return path;
    }

    /** Removes everything inside, keeping the directory itself. */
    void empty() throws IOException {
        for (Path entry : entriesDeepestFirst()) {
            if (!entry.equals(path)) {
                Files.delete(entry);
            }
        }
    }

    @Override
    public void close() throws IOException {
        for (Path entry : entriesDeepestFirst()) {
            Files.delete(entry);
        }
    }

    private List<Path> entriesDeepestFirst() throws IOException {
        try (Stream<Path> entries = Files.walk(path)) {
            return entries.sorted(Comparator.reverseOrder()).toList();
        }
    }
}
