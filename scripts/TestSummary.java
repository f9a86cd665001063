import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.Node;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The summary that {@code ./selene test} prints after Maven has run: every failed test with the first lines of its
 * failure, one count per module, the skip reasons summed, and one closing line {@code N passed, N failed, N skipped}.
 * It reads Surefire's XML reports ({@code <module>/target/surefire-reports/TEST-*.xml}), so the counts are the
 * test runner's own. Run with the Java launcher on this source file:
 *
 * <pre>java scripts/TestSummary.java ROOT MAVEN_EXIT_CODE LOG_FILE SECONDS</pre>
 *
 * Exits 0 only when Maven exited 0 and no test failed; when Maven failed without a failed test (a compile error, a
 * crashed fork), it prints the log's error lines.
 */
public final class TestSummary {

    /** Lines of a failure's message and stack shown per failed test. */
    private static final int FAILURE_LINES = 12;

    private record Failure(String module, String test, String kind, String detail) {
    }

    private static final class Counts {
        int passed;
        int failed;
        int skipped;
    }

    public static void main(String[] args) throws Exception {
        Path root = Path.of(args[0]);
        int mavenExit = Integer.parseInt(args[1]);
        Path log = Path.of(args[2]);
        long seconds = Long.parseLong(args[3]);

        Map<String, Counts> modules = new TreeMap<>();
        Map<String, Integer> skipReasons = new TreeMap<>();
        List<Failure> failures = new ArrayList<>();
        List<Path> reports;
        try (Stream<Path> files = Files.find(root, 4, (p, a) -> p.getParent() != null
                && p.getParent().getFileName().toString().equals("surefire-reports")
                && p.getFileName().toString().startsWith("TEST-") && p.getFileName().toString().endsWith(".xml"))) {
            reports = files.sorted().toList();
        }
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        for (Path report : reports) {
            String module = root.relativize(report).getName(0).toString();
            Counts c = modules.computeIfAbsent(module, m -> new Counts());
            Document doc = factory.newDocumentBuilder().parse(report.toFile());
            NodeList cases = doc.getElementsByTagName("testcase");
            for (int i = 0; i < cases.getLength(); i++) {
                Element tc = (Element) cases.item(i);
                String name = simpleName(tc.getAttribute("classname")) + "." + tc.getAttribute("name");
                Element failure = child(tc, "failure");
                Element error = child(tc, "error");
                Element skipped = child(tc, "skipped");
                if (failure != null || error != null) {
                    c.failed++;
                    Element f = failure != null ? failure : error;
                    failures.add(new Failure(module, name, failure != null ? "failed" : "error", f.getTextContent()
                            .isBlank() ? f.getAttribute("message") : f.getTextContent()));
                } else if (skipped != null) {
                    c.skipped++;
                    skipReasons.merge(reason(skipped), 1, Integer::sum);
                } else {
                    c.passed++;
                }
            }
        }

        for (Failure f : failures) {
            System.out.println("FAILED " + f.module() + ": " + f.test() + " (" + f.kind() + ")");
            f.detail().strip().lines().limit(FAILURE_LINES).forEach(l -> System.out.println("    " + l));
        }
        Counts total = new Counts();
        for (Map.Entry<String, Counts> e : modules.entrySet()) {
            Counts c = e.getValue();
            total.passed += c.passed;
            total.failed += c.failed;
            total.skipped += c.skipped;
            System.out.printf(Locale.ROOT, "  %-12s %5d passed, %d failed, %d skipped%n", e.getKey(), c.passed,
                    c.failed, c.skipped);
        }
        for (Map.Entry<String, Integer> e : skipReasons.entrySet()) {
            System.out.printf(Locale.ROOT, "  skipped %d: %s%n", e.getValue(), e.getKey());
        }
        boolean buildFailed = mavenExit != 0 && total.failed == 0;
        if (buildFailed) {
            System.out.println("The build failed outside the tests (exit " + mavenExit + "); from " + log + ":");
            errorLines(log).forEach(l -> System.out.println("    " + l));
        }
        System.out.printf(Locale.ROOT, "%d passed, %d failed, %d skipped in %d min %02d s (full log: %s)%n",
                total.passed, total.failed, total.skipped, seconds / 60, seconds % 60, root.relativize(log));
        System.exit(mavenExit == 0 && total.failed == 0 ? 0 : 1);
    }

    /** Why a test was skipped, in a few words: its assumption's message, or the reason it was disabled. */
    private static String reason(Element skipped) {
        String text = skipped.getAttribute("message");
        if (text.isBlank()) {
            text = skipped.getTextContent();
        }
        text = text.strip().lines().findFirst().orElse("no reason given");
        text = text.replaceFirst("^org\\.opentest4j\\.TestAbortedException: ", "")
                .replaceFirst("^Assumption failed: ", "");
        return text.isBlank() ? "no reason given" : text;
    }

    private static String simpleName(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }

    private static Element child(Element parent, String tag) {
        for (Node n = parent.getFirstChild(); n != null; n = n.getNextSibling()) {
            if (n instanceof Element e && e.getTagName().equals(tag)) {
                return e;
            }
        }
        return null;
    }

    /** The log's [ERROR] lines, at most 30: what Maven said went wrong. */
    private static List<String> errorLines(Path log) throws IOException {
        if (!Files.exists(log)) {
            return List.of("(no log)");
        }
        List<String> errors = Files.readAllLines(log).stream().filter(l -> l.startsWith("[ERROR]")).limit(30)
                .toList();
        return errors.isEmpty() ? List.of("(no [ERROR] line; see the log)") : errors;
    }
}
