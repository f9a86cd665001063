package dev.selene.transport.disk;

import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Temporary directories under the module's {@code target/}, not {@code java.io.tmpdir}: O_DIRECT needs a disk
 * filesystem, and {@code /tmp} is tmpfs on many machines.
 */
final class BuildDirectoryTempDirs implements TempDirFactory {

    @Override
    public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext context) throws IOException {
        Path root = Files.createDirectories(Path.of("target", "disk-tests").toAbsolutePath());
        return Files.createTempDirectory(root, "junit-");
    }
}
