package dev.selene.node.admin;

import dev.selene.actors.census.ActorCensus;
import org.apache.pekko.actor.typed.ActorSystem;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The node's actor tree for {@code GET /actors}, from the actor census: every live actor of the node with the
 * messages in its mailbox, and per kind the actors, their queued messages and the messages they handled. Taking it
 * sends no actor a message, so it answers in the time it takes to read the census, however busy the actors are.
 */
final class ActorTree {

    /** Most actors listed. */
    static final int MAX_ACTORS = 2_000;

    private ActorTree() {
    }

    /** The census as {@code system}, {@code actors}, {@code truncated}, {@code kinds[]} and the tree {@code root}. */
    static Map<String, Object> of(ActorSystem<?> system) {
        ActorCensus.Snapshot census = ActorCensus.of(system).snapshot(MAX_ACTORS);
        Node root = new Node("user", "/user", "HostCache", 0);
        for (ActorCensus.Actor a : census.actors()) {
            if ("HostCache".equals(a.kind())) {
                root = new Node(a.path().substring(a.path().lastIndexOf('/') + 1), a.path(), "HostCache",
                        a.mailbox());
            }
        }
        for (ActorCensus.Actor a : census.actors()) {
            if (!a.path().startsWith(root.path + "/")) {
                continue;
            }
            Node n = root;
            StringBuilder path = new StringBuilder(root.path);
            for (String name : a.path().substring(root.path.length() + 1).split("/")) {
                path.append('/').append(name);
                String at = path.toString();
                n = n.children.computeIfAbsent(name, k -> new Node(k, at, "anonymous", 0));
            }
            n.kind = a.kind();
            n.mailbox = a.mailbox();
        }
        List<Map<String, Object>> kinds = new ArrayList<>();
        for (ActorCensus.Kind k : census.kinds()) {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("kind", k.kind());
            m.put("actors", k.actors());
            m.put("mailbox", k.mailbox());
            m.put("handled", k.handled());
            kinds.add(m);
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("system", system.name());
        out.put("actors", census.total());
        out.put("truncated", census.total() > MAX_ACTORS);
        out.put("kinds", kinds);
        out.put("root", root.toMap());
        return out;
    }

    /** One actor of the tree; built and read by one request. */
    private static final class Node {
        final String name;
        final String path;
        String kind;
        int mailbox;
        final Map<String, Node> children = new TreeMap<>();

        Node(String name, String path, String kind, int mailbox) {
            this.name = name;
            this.path = path;
            this.kind = kind;
            this.mailbox = mailbox;
        }

        Map<String, Object> toMap() {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("name", name);
            m.put("path", path);
            m.put("kind", kind);
            m.put("mailbox", mailbox);
            List<Map<String, Object>> kids = new ArrayList<>();
            children.values().forEach(c -> kids.add(c.toMap()));
            m.put("children", kids);
            return m;
        }
    }
}
