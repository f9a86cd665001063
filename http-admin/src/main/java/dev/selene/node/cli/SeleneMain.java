package dev.selene.node.cli;

import dev.selene.actors.api.EnvironmentException;
import dev.selene.node.Failures;
import dev.selene.node.admin.BuildInfo;
import dev.selene.node.manager.ManagerCommand;
import dev.selene.node.replay.ReplayCommand;
import dev.selene.node.serve.ServeCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;

/** The {@code selene} command line: the node and its workloads. */
@Command(name = "selene", mixinStandardHelpOptions = true, version = "selene " + BuildInfo.VERSION,
        description = "Host tier under an LLM serving engine's GPU KV cache.",
        subcommands = {BurstCommand.class, SoakCommand.class, ServeCommand.class, ManagerCommand.class,
                ReplayCommand.class,
                CommandLine.HelpCommand.class})
public final class SeleneMain implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** Set once the process is ending from outside (SIGTERM, Ctrl-C): a command's failure then is that stop's. */
    private static volatile boolean endedFromOutside;

    public static void main(String[] args) {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> endedFromOutside = true, "selene-ending"));
        int code;
        try {
            code = execute(args);
        } catch (OutOfMemoryError e) {
            System.err.println("selene: out of memory: " + e.getMessage() + "; lower the warm size (--warm)");
            code = 2;
        }
        System.exit(code);
    }

    /** Log levels {@code SELENE_LOG_LEVEL} may name (the logging library takes any other word as DEBUG). */
    static final List<String> LOG_LEVELS = List.of("ALL", "TRACE", "DEBUG", "INFO", "WARN", "ERROR", "OFF");

    /** Runs the command line and returns its exit code; bad input gets one clear line, never a stack trace. */
    public static int execute(String... args) {
        String level = System.getenv("SELENE_LOG_LEVEL");
        if (level != null && !LOG_LEVELS.contains(level.trim().toUpperCase(Locale.ROOT))) {
            System.err.println("selene: SELENE_LOG_LEVEL = '" + level + "' is invalid; allowed: "
                    + String.join(", ", LOG_LEVELS) + " (INFO when it is not set)");
            return 2;
        }
        CommandLine cl = new CommandLine(new SeleneMain());
        cl.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("selene: " + ex.getMessage());
            ex.getCommandLine().getErr().println("selene: see '" + ex.getCommandLine().getCommandName()
                    + " --help'");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            Throwable root = Failures.root(ex);
            if (endedFromOutside) {
                // the stop closed what the command was using: its failure says nothing the operator needs
                return 1;
            }
            commandLine.getErr().println("selene: " + Failures.message(ex));
            // bad input or an environment a setting names (a directory, memory, managers): 2; anything else: 1
            return root instanceof IllegalArgumentException || root instanceof EnvironmentException ? 2 : 1;
        });
        return cl.execute(args);
    }

    /** {@code selene} alone names no command: the usage on standard error, exit code 2. */
    @Override
    public Integer call() {
        spec.commandLine().usage(spec.commandLine().getErr());
        return 2;
    }
}
