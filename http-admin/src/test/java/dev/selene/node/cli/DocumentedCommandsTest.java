package dev.selene.node.cli;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every command the README and the docs write out ({@code ./selene ...} or {@code selene ...} on a line of a code
 * block, or in a backtick span) still parses against the command line: its subcommand exists, every option exists
 * and every value converts. The commands are parsed, not run.
 *
 * <p>Synopsis notation is read the way a person reads it: {@code [--x]} as {@code --x}, {@code a|b} as each of
 * {@code a} and {@code b}, an upper-case word ({@code N}, {@code FILE}) as a sample value of the option's type, and
 * an option written last without its value as that option with a sample value.
 */
class DocumentedCommandsTest {

    private static final Path ROOT = Path.of("..");

    /** Commands the {@code ./selene} script answers itself, before the Java command line. */
    private static final List<String> SCRIPT_COMMANDS = List.of("test", "build", "bench");

    /** {@code ./selene} or {@code selene}, a subcommand-like word, and the rest: where a written command starts. */
    private static final Pattern COMMAND = Pattern.compile("^(?:\\./)?selene ([a-z][a-z-]*)(?=\\s|$)(.*)$");

    /** A line of a code block: an optional prompt and environment assignments before the command. */
    private static final Pattern CODE_LINE = Pattern.compile("^\\s*(?:\\$\\s+)?(?:[A-Z_][A-Z0-9_]*=\\S*\\s+)*"
            + "((?:\\./)?selene .*)$");

    private static final Pattern INLINE = Pattern.compile("`([^`]+)`");

    private static final Pattern PLACEHOLDER = Pattern.compile("[A-Z][A-Z_]*|<[^>]+>");

    /** One written command: where it is and its words after {@code selene}. */
    record Written(String where, String text, List<String> words) {
    }

    @Test
    void everyCommandInTheReadmeAndTheDocs_parsesAgainstTheCommandLine() throws IOException {
        List<Written> commands = new ArrayList<>();
        commands.addAll(written(ROOT.resolve("README.md")));
        try (Stream<Path> docs = Files.list(ROOT.resolve("docs"))) {
            for (Path doc : docs.filter(p -> p.toString().endsWith(".md")).sorted().toList()) {
                commands.addAll(written(doc));
            }
        }
        assertTrue(commands.size() >= 30, "commands found: " + commands.size());
        String script = Files.readString(ROOT.resolve("selene"));
        List<String> failures = new ArrayList<>();
        int parsed = 0;
        for (Written w : commands) {
            String sub = w.words().getFirst();
            if (SCRIPT_COMMANDS.contains(sub)) {
                if (!script.contains("\n  " + sub + ")")) {
                    failures.add(w.where() + ": `" + w.text() + "`: the selene script has no '" + sub + "' command");
                }
                continue;
            }
            for (List<String> args : variants(w.words())) {
                String problem = problem(args);
                parsed++;
                if (problem != null) {
                    failures.add(w.where() + ": `" + w.text() + "` as " + args + ": " + problem);
                }
            }
        }
        assertEquals(List.of(), failures, "commands in the docs that no longer parse");
        assertTrue(parsed >= 30, "command lines parsed: " + parsed);
    }

    @Test
    void aMistypedCommandOrOption_orAValueThatDoesNotConvert_isCaught() {
        assertTrue(problem(List.of("serv")) != null, "an unknown subcommand");
        assertTrue(problem(List.of("serve", "--wram", "1g")) != null, "an unknown option");
        assertTrue(problem(List.of("burst", "--runs", "five")) != null, "a value that does not convert");
        assertTrue(problem(List.of("serve", "--workload", "burst:often")) != null, "a workload that does not convert");
        assertEquals(null, problem(List.of("serve", "--workload", "burst:3", "--conversations", "8")));
        assertEquals(List.of(List.of("burst", "--preset", "8g", "--runs", "1"),
                List.of("burst", "--preset", "disk-only", "--runs", "1")), variants(List.of("burst", "--preset",
                "8g|disk-only", "[--runs", "N]")), "synopsis notation read as a person reads it");
    }

    /** Why {@code args} does not parse as a {@code selene} command line, or null when it does. */
    private static String problem(List<String> args) {
        try {
            new CommandLine(new SeleneMain()).parseArgs(args.toArray(String[]::new));
            return null;
        } catch (CommandLine.ParameterException e) {
            return e.getMessage();
        }
    }

    /** The commands written in {@code file}: on code-block lines and in backtick spans. */
    private static List<Written> written(Path file) throws IOException {
        List<Written> out = new ArrayList<>();
        List<String> lines = Files.readAllLines(file);
        boolean inBlock = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            String where = ROOT.relativize(file).toString() + ":" + (i + 1);
            if (line.strip().startsWith("```")) {
                inBlock = !inBlock;
                continue;
            }
            if (inBlock) {
                while (line.endsWith("\\") && i + 1 < lines.size()) {
                    line = line.substring(0, line.length() - 1) + " " + lines.get(++i).strip();
                }
                Matcher m = CODE_LINE.matcher(line);
                if (m.matches()) {
                    add(out, where, m.group(1).replaceAll("\\s+#.*$", ""));
                }
                continue;
            }
            Matcher span = INLINE.matcher(line);
            while (span.find()) {
                add(out, where, span.group(1));
            }
        }
        return out;
    }

    private static void add(List<Written> out, String where, String text) {
        Matcher m = COMMAND.matcher(text.strip());
        if (!m.matches()) {
            return;
        }
        List<String> words = new ArrayList<>();
        words.add(m.group(1));
        for (String w : m.group(2).strip().split("\\s+")) {
            if (!w.isEmpty()) {
                words.add(w);
            }
        }
        out.add(new Written(where, text.strip(), words));
    }

    /**
     * The command lines {@code words} stands for: brackets dropped, each alternative of {@code a|b} on its own line,
     * placeholders and a missing last value filled with a sample of the option's type.
     */
    static List<List<String>> variants(List<String> words) {
        List<List<String>> lines = new ArrayList<>();
        lines.add(new ArrayList<>());
        for (String word : words) {
            String w = word.replace("[", "").replace("]", "");
            if (w.isEmpty()) {
                continue;
            }
            List<String> alternatives = w.contains("|") ? List.of(w.split("\\|")) : List.of(w);
            List<List<String>> next = new ArrayList<>();
            for (List<String> line : lines) {
                for (String a : alternatives) {
                    List<String> l = new ArrayList<>(line);
                    l.add(a);
                    next.add(l);
                }
            }
            lines = next;
        }
        List<List<String>> out = new ArrayList<>();
        for (List<String> line : lines) {
            List<String> l = new ArrayList<>(line);
            for (int i = 1; i < l.size(); i++) {
                if (PLACEHOLDER.matcher(l.get(i)).matches()) {
                    l.set(i, sample(l, i));
                }
            }
            OptionSpec last = option(l.getFirst(), l.getLast());
            if (last != null && last.arity().min() > 0) {
                l.add("x");
                l.set(l.size() - 1, sample(l, l.size() - 1));
            }
            out.add(l);
        }
        return out;
    }

    /** A value of the type of the option before word {@code i} of {@code line}. */
    static String sample(List<String> line, int i) {
        OptionSpec o = i > 1 ? option(line.getFirst(), line.get(i - 1)) : null;
        if (o == null) {
            if (i <= 1) {
                throw new IllegalStateException("no option before a placeholder in " + line);
            }
            return "x"; // a positional parameter (a file name)
        }
        Class<?> t = o.type();
        if (t == int.class || t == Integer.class || t == long.class || t == Long.class) {
            return "1";
        }
        if (t == double.class || t == Double.class) {
            return "0.5";
        }
        return "x";
    }

    /** The option {@code name} of subcommand {@code sub}, or null when either does not exist or it is no option. */
    private static OptionSpec option(String sub, String name) {
        if (!name.startsWith("-")) {
            return null;
        }
        CommandLine cl = new CommandLine(new SeleneMain()).getSubcommands().get(sub);
        return cl == null ? null : cl.getCommandSpec().findOption(name);
    }
}
