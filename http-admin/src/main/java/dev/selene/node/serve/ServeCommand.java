package dev.selene.node.serve;

import dev.selene.engine.config.ByteSize;
import dev.selene.node.config.NodeOptions;
import dev.selene.node.config.NodeSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import sun.misc.Signal;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@code selene serve}: a long-running node with the cache and the admin HTTP server; SIGTERM or SIGINT stops it
 * cleanly and exits with 0.
 */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run a cache node with its admin HTTP server until SIGTERM (or Ctrl-C), which stops it "
                + "cleanly and exits 0. Exit code 2: a setting or what it names on this machine is invalid "
                + "(one line says which); 1: the node failed.")
public final class ServeCommand implements Callable<Integer> {

    @Mixin
    NodeOptions options;

    @Override
    public Integer call() {
        NodeSettings settings = options.load();
        // A stop signal is a request to stop, not a failure: the node stops through its coordinated shutdown and
        // main returns 0 (the JVM's default handler would exit with 128 + the signal's number). One that arrives
        // while the node starts (a disk recovery can take minutes) stops it as soon as it is up; a second one
        // then exits at once, as the default handler would.
        CompletableFuture<SeleneNode> started = new CompletableFuture<>();
        AtomicBoolean signalled = new AtomicBoolean();
        for (String name : new String[] {"TERM", "INT"}) {
            Signal.handle(new Signal(name), s -> {
                if (signalled.getAndSet(true) && !started.isDone()) {
                    System.exit(128 + s.getNumber());
                }
                started.thenAccept(SeleneNode::stop);
            });
        }
        SeleneNode node = SeleneNode.start(settings);
        var c = settings.cache();
        System.err.printf("selene serve: %s node, layout %s, warm %s, max age %s; admin http://%s:%d/%n",
                settings.shape(), c.layout().name(), ByteSize.format(c.warmBytes()),
                c.maxAge() == null ? "off" : dev.selene.actors.api.Durations.human(c.maxAge()), settings.admin().bind(),
                node.adminPort());
        System.err.flush();
        started.complete(node);
        node.whenStopped().toCompletableFuture().join();
        System.err.println("selene serve: stopped");
        return 0;
    }
}
