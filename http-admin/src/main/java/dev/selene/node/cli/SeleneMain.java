package dev.selene.node.cli;

import dev.selene.actors.api.EnvironmentException;
import dev.selene.node.Failures;
import dev.selene.node.admin.BuildInfo;
import dev.selene.node.manager.ManagerCommand;
import dev.selene.node.replay.ReplayCommand;
import dev.selene.node.serve.ServeCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code selene} command line: the node and its workloads. */
@Command(name = "selene", mixinStandardHelpOptions = true, version = "selene " + BuildInfo.VERSION,
        description = "Host tier under an LLM serving engine's GPU KV cache.",
        subcommands = {BurstCommand.class, SoakCommand.class, ServeCommand.class, ManagerCommand.class,
                ReplayCommand.class,
                CommandLine.HelpCommand.class})
public final class SeleneMain implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    public static void main(String[] args) {
        int code;
        try {
            code = execute(args);
        } catch (OutOfMemoryError e) {
            System.err.println("selene: out of memory: " + e.getMessage() + "; lower the warm size (--warm)");
            code = 2;
        }
        System.exit(code);
    }

    /** Runs the command line and returns its exit code; bad input gets one clear line, never a stack trace. */
    public static int execute(String... args) {
        CommandLine cl = new CommandLine(new SeleneMain());
        cl.setParameterExceptionHandler((ex, a) -> {
            ex.getCommandLine().getErr().println("selene: " + ex.getMessage());
            ex.getCommandLine().getErr().println("selene: see '" + ex.getCommandLine().getCommandName()
                    + " --help'");
            return 2;
        });
        cl.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            Throwable root = Failures.root(ex);
            commandLine.getErr().println("selene: " + Failures.message(ex));
            // bad input or an environment a setting names (a directory, memory, managers): 2; anything else: 1
            return root instanceof IllegalArgumentException || root instanceof EnvironmentException ? 2 : 1;
        });
        return cl.execute(args);
    }

    @Override
    public void run() {
        spec.commandLine().usage(System.out);
    }
}
