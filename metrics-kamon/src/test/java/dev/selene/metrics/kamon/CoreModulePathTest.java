package dev.selene.metrics.kamon;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import java.util.zip.ZipFile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The core's jars are modules: an application module that requires {@code dev.selene.actors} compiles against the
 * core's jars on the module path (the core's packages that are not API stay out of its reach) and runs the embedding
 * example there: a node in its actor system publishes a chain, restores it and checks every byte. (Here rather than in
 * the core's own tests because the core's jars, with their module descriptors, exist only once it is packaged.)
 */
class CoreModulePathTest {

    private static final Path ACTORS = Path.of("../actors");

    @Test
    void anApplicationModule_requiringTheCore_compilesAndRunsTheEmbeddingExampleOnTheModulePath(
            @TempDir Path dir) throws Exception {
        List<String> modulePath = coreModulePath();
        Path src = dir.resolve("src");
        Files.createDirectories(src.resolve("example"));
        Files.writeString(src.resolve("module-info.java"), "module example { requires dev.selene.actors; }\n");
        Files.copy(ACTORS.resolve("src/test/java/example/EmbeddingExample.java"),
                src.resolve("example/EmbeddingExample.java"));
        Files.writeString(src.resolve("example/Main.java"), """
                package example;

                import com.typesafe.config.ConfigFactory;
                import dev.selene.actors.api.SeleneCache;

                public final class Main {
                    public static void main(String[] args) {
                        int intact = EmbeddingExample.run(ConfigFactory.parseString(
                                "selene { layout = small, warm = 16m, concurrency = 2 }")
                                .withFallback(ConfigFactory.load()));
                        System.out.println(intact + " records intact; " + Main.class.getModule().getName() + " on "
                                + SeleneCache.class.getModule().getName());
                    }
                }
                """);
        Path out = dir.resolve("out");
        String path = String.join(File.pathSeparator, modulePath);
        compile(List.of("--module-path", path, "-d", out.toString(),
                src.resolve("module-info.java").toString(), src.resolve("example/EmbeddingExample.java").toString(),
                src.resolve("example/Main.java").toString()));

        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Process p = new ProcessBuilder(java.toString(), "--module-path", path + File.pathSeparator + out,
                "--enable-native-access=dev.selene.transport",
                "--sun-misc-unsafe-memory-access=allow", "-m", "example/example.Main")
                .redirectErrorStream(true).redirectOutput(dir.resolve("run.log").toFile()).start();
        try {
            assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the example did not end within 120 s");
        } finally {
            p.destroyForcibly();
        }
        String text = Files.readString(dir.resolve("run.log"));
        assertEquals(0, p.exitValue(), text);
        assertTrue(text.contains("3 records intact; example on dev.selene.actors"), text);
    }

    @Test
    void anApplicationModule_cannotReachTheCoresInternalPackages(@TempDir Path dir)
            throws Exception {
        Path src = dir.resolve("src");
        Files.createDirectories(src.resolve("example"));
        Files.writeString(src.resolve("module-info.java"), "module example { requires dev.selene.actors; }\n");
        Files.writeString(src.resolve("example/Internal.java"), """
                package example;

                final class Internal {
                    Object index = dev.selene.engine.index.RecordIndex.class;
                    Object store = dev.selene.actors.store.RemoteTier.class;
                }
                """);
        String errors = compileErrors(List.of("--module-path", String.join(File.pathSeparator, coreModulePath()),
                "-d", dir.resolve("out").toString(), src.resolve("module-info.java").toString(),
                src.resolve("example/Internal.java").toString()));
        assertTrue(errors.contains("package dev.selene.engine.index is declared in module dev.selene.engine, which "
                + "does not export it"), errors);
        assertTrue(errors.contains("package dev.selene.actors.store is declared in module dev.selene.actors, which "
                + "does not export it"), errors);
        assertEquals(2, errors.lines().filter(l -> l.contains(": error:")).count(), errors);
    }

    /** The core's runtime jars (as Maven resolved them for an application of the core alone) and its own jar. */
    private static List<String> coreModulePath() throws IOException {
        Path classPath = ACTORS.resolve("target/core-runtime-classpath.txt");
        assertTrue(Files.exists(classPath), classPath + " is written by the core's build (./mvnw install)");
        List<String> jars = new ArrayList<>(List.of(Files.readString(classPath).strip().split(File.pathSeparator)));
        try (Stream<Path> files = Files.list(ACTORS.resolve("target"))) {
            files.map(Path::toString)
                    .filter(f -> f.matches(".*selene-actors-[^/]*\\.jar") && !f.endsWith("-tests.jar"))
                    .forEach(jars::add);
        }
        for (String jar : jars) {
            if (jar.contains("selene-")) {
                assertTrue(jar.endsWith(".jar") && hasDescriptor(jar), jar + " is a packaged module (./mvnw install)");
            }
        }
        return jars;
    }

    private static boolean hasDescriptor(String jar) throws IOException {
        try (ZipFile zip = new ZipFile(jar)) {
            return zip.getEntry("module-info.class") != null;
        }
    }

    private static void compile(List<String> args) {
        String errors = compileErrors(args);
        assertEquals("", errors, "the application module did not compile");
    }

    /** What javac printed for {@code args}, empty when it compiled without a word. */
    private static String compileErrors(List<String> args) {
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        List<String> all = new ArrayList<>(List.of("-cp", "")); // not this JVM's class path: the modules only
        all.addAll(args);
        int rc = javac.run(null, null, err, all.toArray(String[]::new));
        String text = err.toString(StandardCharsets.UTF_8);
        return rc == 0 && text.isBlank() ? "" : text;
    }
}
