package dev.selene.node.admin;

import org.apache.pekko.actor.ActorIdentity;
import org.apache.pekko.actor.ActorPath;
import org.apache.pekko.actor.ActorSelection;
import org.apache.pekko.actor.Identify;
import org.apache.pekko.actor.typed.ActorSystem;
import org.apache.pekko.actor.typed.Behavior;
import org.apache.pekko.actor.typed.Props;
import org.apache.pekko.actor.typed.javadsl.Adapter;
import org.apache.pekko.actor.typed.javadsl.Behaviors;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The node's actor tree for {@code GET /actors}, found with Pekko's public API only: {@code Identify} sent to
 * {@code /user/*}, then {@code /user/*}{@code /*} and so on, each level collected until no new answer arrives
 * for a short quiet period. Bounded in depth and size; one walk costs a few hundred milliseconds.
 */
final class ActorTree {

    /** Deepest level walked below {@code /user}. */
    static final int MAX_DEPTH = 6;
    /** Most actors listed. */
    static final int MAX_ACTORS = 2_000;

    private static final Duration QUIET = Duration.ofMillis(60);
    private static final Duration LEVEL_TIMEOUT = Duration.ofMillis(600);
    private static final AtomicLong WALKS = new AtomicLong();

    private ActorTree() {
    }

    /** The tree under {@code /user} as nested maps {@code {name, path, children}}, plus a truncation flag. */
    static CompletionStage<Map<String, Object>> walk(ActorSystem<?> system) {
        CompletableFuture<List<ActorPath>> found = new CompletableFuture<>();
        system.systemActorOf(walker(found), "actor-tree-" + WALKS.incrementAndGet(), Props.empty());
        return found.thenApply(paths -> tree(system, paths));
    }

    private record Quiet(int level, int seen) {
    }

    private static Behavior<Object> walker(CompletableFuture<List<ActorPath>> result) {
        return Behaviors.setup(ctx -> Behaviors.withTimers(timers -> {
            List<ActorPath> found = new ArrayList<>();
            int[] level = {1};
            int[] levelCount = {0};
            long[] levelStart = {System.nanoTime()};
            Runnable ask = () -> {
                String pattern = "/user" + "/*".repeat(level[0]);
                ActorSelection sel = Adapter.toClassic(ctx.getSystem()).actorSelection(pattern);
                sel.tell(new Identify(level[0]), Adapter.toClassic(ctx.getSelf()));
                levelCount[0] = 0;
                levelStart[0] = System.nanoTime();
                timers.startSingleTimer(new Quiet(level[0], 0), QUIET);
            };
            ask.run();
            return Behaviors.receive(Object.class)
                    .onMessage(ActorIdentity.class, id -> {
                        if (id.getActorRef().isPresent() && found.size() < MAX_ACTORS) {
                            found.add(id.getActorRef().get().path());
                            levelCount[0]++;
                        }
                        return Behaviors.same();
                    })
                    .onMessage(Quiet.class, q -> {
                        boolean settled = q.seen() == levelCount[0]
                                || System.nanoTime() - levelStart[0] > LEVEL_TIMEOUT.toNanos();
                        if (!settled) {
                            timers.startSingleTimer(new Quiet(q.level(), levelCount[0]), QUIET);
                            return Behaviors.same();
                        }
                        if (levelCount[0] == 0 || level[0] == MAX_DEPTH || found.size() >= MAX_ACTORS) {
                            result.complete(found);
                            return Behaviors.stopped();
                        }
                        level[0]++;
                        ask.run();
                        return Behaviors.same();
                    })
                    .build();
        }));
    }

    private static Map<String, Object> tree(ActorSystem<?> system, List<ActorPath> paths) {
        Node root = new Node("user", "/user", null);
        for (ActorPath p : paths) {
            List<String> elements = new ArrayList<>();
            p.getElements().forEach(elements::add);
            Node n = root;
            StringBuilder path = new StringBuilder("/user");
            for (int i = 1; i < elements.size(); i++) {
                path.append('/').append(elements.get(i));
                String name = elements.get(i);
                String at = path.toString();
                Node parent = n;
                n = n.children.computeIfAbsent(name, k -> new Node(k, at, parent.name));
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("system", system.name());
        out.put("actors", paths.size() + 1);
        out.put("truncated", paths.size() >= MAX_ACTORS);
        out.put("root", root.toMap());
        return out;
    }

    private static final class Node {
        final String name;
        final String path;
        final String parent;
        final Map<String, Node> children = new TreeMap<>();

        Node(String name, String path, String parent) {
            this.name = name;
            this.path = path;
            this.parent = parent;
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("path", path);
            m.put("kind", kind());
            List<Map<String, Object>> kids = new ArrayList<>();
            children.values().forEach(c -> kids.add(c.toMap()));
            m.put("children", kids);
            return m;
        }

        /** The behaviour behind a path, as far as the node's naming tells it. */
        private String kind() {
            if (name.startsWith("$")) {
                return "catalog".equals(parent) ? "RecordActor" : "anonymous";
            }
            if (name.startsWith("restore-")) {
                return "RestoreTask";
            }
            return switch (name) {
                case "user" -> "HostCache";
                case "slot-pool" -> "SlotPool";
                case "catalog" -> "Catalog";
                case "disk-store" -> "DiskStore";
                default -> name;
            };
        }
    }
}
