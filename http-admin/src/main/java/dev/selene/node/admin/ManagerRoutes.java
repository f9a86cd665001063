package dev.selene.node.admin;

import dev.selene.actors.pool.ManagerStore;
import dev.selene.actors.pool.PoolManagerNode;
import dev.selene.node.Failures;
import dev.selene.node.config.ManagerSettings;
import dev.selene.node.config.NodeSettings;
import org.apache.pekko.cluster.ClusterEvent;
import org.apache.pekko.cluster.Member;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeoutException;

/**
 * The admin HTTP routes of a pool manager, all read-only: {@code /health}, {@code /ready}, {@code /metrics},
 * {@code /status} (the store's figures and the cluster's members) and the status page at {@code /}. Errors are
 * the same JSON shape as a cache node's.
 */
final class ManagerRoutes extends AdminDirectives {

    private static final Logger LOG = LoggerFactory.getLogger(ManagerRoutes.class);
    private static final String DATA_CENTER_ROLE_PREFIX = "dc-";

    private final ManagerContext ctx;
    private final PoolManagerNode node;

    ManagerRoutes(ManagerContext ctx) {
        this.ctx = ctx;
        this.node = ctx.node();
    }

    Route routes() {
        return withRequestTimeoutResponse(r -> AdminRoutes.timedOut("manager"), () -> handleExceptions(exceptions(),
                () -> handleRejections(AdminRoutes.rejections(), () -> bodyLimit(maxBodyBytes(), () -> concat(
                pathSingleSlash(() -> get(() -> noQuery(() -> getFromResource("selene-admin/manager.html",
                        ContentTypes.TEXT_HTML_UTF8)))),
                pathPrefix("assets", () -> get(() -> noQuery(() -> resourceDirectory("selene-admin")))),
                path("health", () -> get(() -> noQuery(() -> complete(Json.ok(Map.of("status", "ok")))))),
                path("ready", () -> get(() -> noQuery(this::ready))),
                path("metrics", () -> get(() -> noQuery(() -> complete(HttpResponse.create().withEntity(
                        HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8, PrometheusMetrics.scrape())))))),
                path("status", () -> get(() -> noQuery(() -> completeWithFuture(
                        node.status().thenCombine(node.directoryEntities(),
                                (s, entities) -> Json.ok(status(s, entities))))))))))));
    }

    private long maxBodyBytes() {
        return ctx.settings().admin().maxBodyBytes();
    }

    /** Why the manager does not take traffic, or null: starting or stopping, or not (yet) an Up member. */
    private String notReadyBecause() {
        String reason = ctx.readiness().reason();
        if (reason != null) {
            return reason;
        }
        MemberStatus self = Cluster.get(node.system()).selfMember().status();
        if (self == MemberStatus.up()) {
            return null;
        }
        // The cluster library calls a node that has joined no cluster yet Removed, as one that has left.
        return self == MemberStatus.removed() && ctx.readiness().reason() == null
                ? "not an Up member of the pool's cluster (not joined yet: none of its seeds has let it in)"
                : "not an Up member of the pool's cluster (" + self + ")";
    }

    private Route ready() {
        String reason = notReadyBecause();
        if (reason == null) {
            return complete(Json.ok(Map.of("ready", true)));
        }
        Map<String, Object> body = new LinkedHashMap<>(Json.errorBody(StatusCodes.SERVICE_UNAVAILABLE,
                "not_ready", reason));
        body.put("ready", false);
        return complete(Json.response(StatusCodes.SERVICE_UNAVAILABLE, body));
    }

    private Map<String, Object> status(ManagerStore.StoreStatus store, List<String> entities) {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> n = new LinkedHashMap<>();
        n.put("role", "manager");
        n.put("address", ctx.address());
        n.put("ready", notReadyBecause() == null);
        n.put("settingsFrom", ctx.settings().source());
        n.put("startedAt", Instant.ofEpochMilli(ctx.startedEpochMillis()).toString());
        n.put("uptimeSeconds", (System.currentTimeMillis() - ctx.startedEpochMillis()) / 1000);
        n.put("metricsNode", node.address());
        out.put("node", n);
        out.put("store", store);
        out.put("cluster", cluster());
        out.put("directory", Map.of("entities", entities, "shortOfReplicas",
                dev.selene.actors.pool.ReplicaShortfall.get(node.system()).total()));
        out.put("config", config(ctx.settings()));
        return out;
    }

    private Map<String, Object> cluster() {
        Cluster cluster = Cluster.get(node.system());
        ClusterEvent.CurrentClusterState state = cluster.state();
        Set<Member> unreachable = state.getUnreachable();
        List<Map<String, Object>> members = new ArrayList<>();
        List<Member> sorted = new ArrayList<>();
        state.getMembers().forEach(sorted::add);
        sorted.sort(Comparator.comparing(m -> m.address().toString()));
        for (Member m : sorted) {
            Map<String, Object> row = new LinkedHashMap<>();
            row.put("address", m.address().toString());
            row.put("roles", roles(m));
            row.put("status", m.status().toString());
            row.put("reachable", !unreachable.contains(m));
            row.put("self", m.address().equals(cluster.selfMember().address()));
            members.add(row);
        }
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("self", cluster.selfMember().address().toString());
        c.put("selfStatus", cluster.selfMember().status().toString());
        c.put("leader", state.getLeader() == null ? null : state.getLeader().toString());
        c.put("members", members);
        c.put("unreachable", unreachable.size());
        return c;
    }

    private static Set<String> roles(Member m) {
        Set<String> roles = new TreeSet<>();
        for (String r : m.getRoles()) {
            if (!r.startsWith(DATA_CENTER_ROLE_PREFIX)) {
                roles.add(r);
            }
        }
        return roles;
    }

    private static Map<String, Object> config(NodeSettings s) {
        ManagerSettings m = s.manager();
        Map<String, Object> c = new LinkedHashMap<>();
        c.put("layout", Json.layout(s.cache().layout()));
        c.put("bind", m.bind());
        c.put("port", m.port());
        c.put("seeds", m.seeds());
        c.put("storeBytes", m.storeBytes());
        c.put("maxAge", m.maxAge() == null ? "off" : m.maxAge().toString());
        c.put("replicas", m.replicas());
        Map<String, Object> admin = new LinkedHashMap<>();
        admin.put("bind", s.admin().bind());
        admin.put("port", m.adminPort());
        c.put("admin", admin);
        return c;
    }

    private ExceptionHandler exceptions() {
        return ExceptionHandler.newBuilder().matchAny(t -> complete(errorFor(t))).build();
    }

    private HttpResponse errorFor(Throwable t) {
        Throwable root = Failures.root(t);
        HttpResponse unreadable = requestError(root, maxBodyBytes());
        if (unreadable != null) {
            return unreadable;
        }
        if (root instanceof TimeoutException) {
            return Json.error(StatusCodes.SERVICE_UNAVAILABLE, "timeout", "the manager did not answer in time; retry");
        }
        LOG.error("admin request failed", root);
        return Json.error(StatusCodes.INTERNAL_SERVER_ERROR, "internal", "the request failed inside the manager: "
                + root.getClass().getSimpleName() + " (details in the manager's log)");
    }
}
