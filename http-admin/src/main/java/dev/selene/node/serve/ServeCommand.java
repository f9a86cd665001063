package dev.selene.node.serve;

import dev.selene.engine.config.ByteSize;
import dev.selene.node.config.NodeOptions;
import dev.selene.node.config.NodeSettings;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;

import java.util.concurrent.Callable;

/** {@code selene serve}: a long-running node with the cache and the admin HTTP server; SIGTERM stops it. */
@Command(name = "serve", mixinStandardHelpOptions = true,
        description = "Run a cache node with its admin HTTP server until SIGTERM (or Ctrl-C).")
public final class ServeCommand implements Callable<Integer> {

    @Mixin
    NodeOptions options;

    @Override
    public Integer call() {
        NodeSettings settings = options.load();
        SeleneNode node = SeleneNode.start(settings);
        var c = settings.cache();
        System.err.printf("selene serve: %s node, layout %s, warm %s, max age %s; admin http://%s:%d/%n",
                settings.shape(), c.layout().name(), ByteSize.format(c.warmBytes()),
                c.maxAge() == null ? "off" : c.maxAge(), settings.admin().bind(), node.adminPort());
        System.err.flush();
        node.whenStopped().toCompletableFuture().join();
        System.err.println("selene serve: stopped");
        return 0;
    }
}
