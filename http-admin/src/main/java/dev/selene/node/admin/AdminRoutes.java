package dev.selene.node.admin;

import dev.selene.actors.api.SeleneCache;
import dev.selene.actors.pool.PoolCluster;
import dev.selene.actors.trace.TraceBook;
import dev.selene.actors.trace.TraceEvent;
import dev.selene.actors.value.CacheStatus;
import dev.selene.actors.value.EvictOutcome;
import dev.selene.actors.value.ExpiryReport;
import dev.selene.actors.value.RecordDescription;
import dev.selene.actors.value.RecordPage;
import dev.selene.actors.value.RecordView;
import dev.selene.actors.value.Tier;
import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import dev.selene.node.Failures;
import dev.selene.node.config.AdminSettings;
import org.apache.pekko.cluster.MemberStatus;
import org.apache.pekko.cluster.typed.Cluster;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpHeader;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.model.headers.RawHeader;
import org.apache.pekko.http.javadsl.server.ExceptionHandler;
import org.apache.pekko.http.javadsl.server.PathMatchers;
import org.apache.pekko.http.javadsl.server.RejectionHandler;
import org.apache.pekko.http.javadsl.server.Route;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The admin HTTP routes. Read-only: {@code /health}, {@code /ready}, {@code /metrics}, {@code /status},
 * {@code /status/history}, {@code /records}, {@code /records/{ns}/{key}}, {@code /trace/{ns}/{key}},
 * {@code /traces}, {@code /actors}, and the status page at {@code /} (its files under {@code /assets/}, uPlot under
 * {@code /assets/uplot/}). Mutating, with {@code Authorization: Bearer TOKEN}:
 * {@code POST /drain}, {@code DELETE /records/{ns}/{key}}, {@code POST /expire}.
 *
 * <p>Every error is a JSON body {@code {"status", "error", "detail"}}: bad input gets a 4xx, never a 500 or a
 * stack trace (the rejection and exception handlers below turn everything into that shape).
 */
final class AdminRoutes extends AdminDirectives {

    /** Default and largest page of {@code GET /records}. */
    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;
    /** Default and largest number of traces of {@code GET /traces}. */
    static final int DEFAULT_TRACE_LIMIT = 20;
    static final int MAX_TRACE_LIMIT = 200;
    /** The query parameters of {@code GET /records} and {@code GET /traces}. */
    private static final List<String> RECORDS_PARAMS = List.of("offset", "limit", "tier", "namespace");
    private static final List<String> TRACES_PARAMS = List.of("namespace", "prefix", "limit");
    /** Those of the status page ({@code GET /}): its script reads them to open a record and a page of the list. */
    private static final List<String> PAGE_PARAMS = List.of("ns", "key", "tier", "namespace", "offset", "limit");

    /** An event's time: ISO 8601 in UTC with microseconds. */
    private static final DateTimeFormatter MICROS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
            .withZone(ZoneOffset.UTC);

    private static final Logger LOG = LoggerFactory.getLogger(AdminRoutes.class);
    /** Where the uPlot WebJar keeps its built files; served under {@code /assets/uplot/}. */
    static final String UPLOT_DIR = "META-INF/resources/webjars/uplot/" + webJarVersion("uplot") + "/dist";
    private static final Duration DRAIN_TIMEOUT = Duration.ofMinutes(5);

    private final AdminContext ctx;
    private final SeleneCache cache;
    private final AdminSettings admin;
    private final byte[] token;

    AdminRoutes(AdminContext ctx) {
        this.ctx = ctx;
        this.cache = ctx.cache();
        this.admin = ctx.settings().admin();
        this.token = admin.token().getBytes(StandardCharsets.UTF_8);
    }

    Route routes() {
        return withRequestTimeoutResponse(r -> timedOut("node"), () -> handleExceptions(exceptions(),
                () -> handleRejections(rejections(), () -> bodyLimit(admin.maxBodyBytes(), () -> concat(
                pathSingleSlash(() -> get(() -> query(PAGE_PARAMS, p -> getFromResource("selene-admin/index.html",
                        ContentTypes.TEXT_HTML_UTF8)))),
                pathPrefix("assets", () -> get(() -> noQuery(() -> concat(
                        pathPrefix("uplot", () -> resourceDirectory(UPLOT_DIR)),
                        resourceDirectory("selene-admin"))))),
                path("health", () -> get(() -> noQuery(() -> complete(Json.ok(Map.of("status", "ok")))))),
                path("ready", () -> get(() -> noQuery(this::ready))),
                path("metrics", () -> get(() -> noQuery(() -> complete(HttpResponse.create().withEntity(
                        HttpEntities.create(ContentTypes.TEXT_PLAIN_UTF8, PrometheusMetrics.scrape())))))),
                path("status", () -> get(() -> noQuery(this::status))),
                path(PathMatchers.segment("status").slash("history"),
                        () -> get(() -> noQuery(() -> complete(Json.ok(history()))))),
                path("records", () -> get(() -> query(RECORDS_PARAMS, this::records))),
                path(PathMatchers.segment("records").slash(PathMatchers.segment()).slash(PathMatchers.segment()),
                        (ns, key) -> concat(
                                get(() -> noQuery(() -> withKey(ns, key, this::describe))),
                                delete(() -> authorized(() -> noInput(() -> withKey(ns, key, this::evict)))))),
                path(PathMatchers.segment("trace").slash(PathMatchers.segment()).slash(PathMatchers.segment()),
                        (ns, key) -> get(() -> noQuery(() -> withKey(ns, key, this::trace)))),
                path("traces", () -> get(() -> query(TRACES_PARAMS, this::traces))),
                path("actors", () -> get(() -> noQuery(() -> complete(Json.ok(ActorTree.of(cache.system())))))),
                path("drain", () -> post(() -> authorized(() -> noInput(this::drain)))),
                path("expire", () -> post(() -> authorized(() -> noInput(this::expire)))))))));
    }

    // --- read-only ----------------------------------------------------------------------------------------------

    private Route ready() {
        String reason = ctx.readiness().reason();
        if (reason == null) {
            return complete(Json.ok(Map.of("ready", true)));
        }
        Map<String, Object> body = new LinkedHashMap<>(Json.errorBody(StatusCodes.SERVICE_UNAVAILABLE,
                "not_ready", reason));
        body.put("ready", false);
        return complete(Json.response(StatusCodes.SERVICE_UNAVAILABLE, body));
    }

    /**
     * The node's status from the sampler's last sample (at most one sample interval old), with live counters:
     * an admin read never queues behind publications in the tiers' mailboxes. Before the first sample, asks.
     */
    private Route status() {
        CacheStatus sampled = ctx.history().latest();
        if (sampled == null) {
            return completeWithFuture(cache.status().thenApply(s -> Json.ok(status(s, System.currentTimeMillis()))));
        }
        CacheStatus live = new CacheStatus(sampled.enabled(), sampled.totalSlots(), sampled.intakeSlots(),
                sampled.freeSlots(), sampled.cleanSlots(), sampled.residentRecords(), sampled.inFlight(),
                cache.counters().snapshot(), sampled.disk(), sampled.pool(), sampled.metricsNode());
        return complete(Json.ok(status(live, ctx.history().latestEpochMillis())));
    }

    private Map<String, Object> status(CacheStatus s, long sampledEpochMillis) {
        CacheConfig c = cache.config();
        Layout l = c.layout();
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> node = new LinkedHashMap<>();
        node.put("shape", ctx.settings().shape());
        node.put("enabled", s.enabled());
        node.put("device", cache.copier().name());
        node.put("settingsFrom", ctx.settings().source());
        node.put("startedAt", Instant.ofEpochMilli(ctx.startedEpochMillis()).toString());
        node.put("uptimeSeconds", (System.currentTimeMillis() - ctx.startedEpochMillis()) / 1000);
        node.put("ready", ctx.readiness().isReady());
        node.put("metricsNode", s.metricsNode());
        out.put("node", node);
        out.put("sampledAt", Instant.ofEpochMilli(sampledEpochMillis).toString());

        Map<String, Object> slots = new LinkedHashMap<>();
        slots.put("total", s.totalSlots());
        slots.put("inUse", s.freeSlots() < 0 ? null : s.usedSlots());
        slots.put("free", s.freeSlots() < 0 ? null : s.freeSlots());
        slots.put("clean", s.cleanSlots() < 0 ? null : s.cleanSlots());
        slots.put("intake", s.intakeSlots());
        slots.put("slotBytes", l.slotBytes());
        out.put("slots", slots);

        Map<String, Object> intake = new LinkedHashMap<>();
        intake.put("slots", s.intakeSlots());
        intake.put("bytes", s.intakeSlots() * l.slotBytes());
        intake.put("inFlight", s.inFlight());
        out.put("intake", intake);

        List<Map<String, Object>> tiers = new ArrayList<>();
        tiers.add(tier(Tier.MEMORY, c.warmBytes() > 0, Map.of(
                "warmBytes", c.warmBytes(),
                "records", Math.max(0, s.residentRecords()),
                "bytesInUse", s.freeSlots() < 0 ? 0 : (long) s.usedSlots() * l.slotBytes())));
        Map<String, Object> disk = new LinkedHashMap<>();
        if (c.diskDir() != null) {
            disk.put("dir", c.diskDir());
            // the tier's size now: lower than the configured one when the disk could not hold that at start or
            // filled up later
            disk.put("bytes", s.disk() != null ? s.disk().capacityBytes() : c.diskBytes());
            disk.put("configuredBytes", c.diskBytes());
        }
        if (s.disk() != null) {
            disk.put("records", s.disk().records());
            disk.put("bytesInUse", s.disk().bytes());
            disk.put("writesInFlight", s.disk().writesInFlight());
            disk.put("filesBeingRead", s.disk().filesBeingRead());
            disk.put("readEstimateBytesPerSecond", Math.round(s.disk().readBytesPerSecond()));
            disk.put("readEstimateSamples", s.disk().readSamples());
        }
        tiers.add(tier(Tier.DISK, c.diskDir() != null, disk));
        tiers.add(tier(Tier.POOL, c.poolEnabled(), pool(c, s)));
        out.put("tiers", tiers);

        out.put("config", config(c));
        out.put("counters", s.counters());
        out.put("traces", Map.of("records", cache.traces().records()));
        return out;
    }

    /**
     * The pool tier: the managers configured, those up in the cluster now, what this host remembers retiring (where
     * the pool is its only durable tier) and what it moved.
     */
    private Map<String, Object> pool(CacheConfig c, CacheStatus s) {
        Map<String, Object> m = new LinkedHashMap<>();
        Map<String, Long> counters = s.counters();
        m.put("managers", ctx.settings().poolManagers());
        if (s.pool() != null) {
            m.put("records", s.pool().records());
            m.put("bytesInUse", s.pool().bytes());
            m.put("capacityBytes", s.pool().capacityBytes());
            m.put("readEstimateBytesPerSecond", Math.round(s.pool().readBytesPerSecond()));
            m.put("readEstimateSamples", s.pool().readSamples());
        }
        if (c.poolEnabled()) {
            List<String> up = new ArrayList<>();
            Cluster.get(cache.system()).state().getMembers().forEach(member -> {
                if (member.hasRole(PoolCluster.MANAGER_ROLE) && member.status() == MemberStatus.up()) {
                    up.add(member.address().toString());
                }
            });
            m.put("managersUp", up);
            m.put("retired", counters.getOrDefault("pool.retired", 0L));
            m.put("writeBytes", counters.getOrDefault("pool.write.bytes", 0L));
            m.put("readBytes", counters.getOrDefault("pool.read.bytes", 0L));
            m.put("restoredRecords", counters.getOrDefault("restore.records.pool", 0L));
        }
        return m;
    }

    private static Map<String, Object> tier(Tier tier, boolean configured, Map<String, Object> details) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("tier", tier.label());
        m.put("configured", configured);
        m.putAll(details);
        return m;
    }

    private Map<String, Object> config(CacheConfig c) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("layout", Json.layout(c.layout()));
        m.put("warmBytes", c.warmBytes());
        m.put("concurrency", c.concurrency());
        m.put("hostBudgetBytes", c.hostBudgetBytes());
        m.put("transferWindowSlots", c.effectiveWindowSlots());
        m.put("device", c.device());
        m.put("diskDir", c.diskDir());
        m.put("diskBytes", c.diskBytes());
        m.put("poolManagers", ctx.settings().poolManagers());
        m.put("maxAge", c.maxAge() == null ? "off" : c.maxAge().toString());
        m.put("drainOnShutdown", c.drainOnShutdown());
        Map<String, Object> a = new LinkedHashMap<>();
        a.put("bind", admin.bind());
        a.put("port", admin.port());
        a.put("tokenSet", admin.tokenSet());
        a.put("maxBodyBytes", admin.maxBodyBytes());
        m.put("admin", a);
        return m;
    }

    private Map<String, Object> history() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("intervalMillis", admin.sampleInterval().toMillis());
        m.put("capacity", ctx.history().capacity());
        m.put("samples", ctx.history().samples());
        m.put("events", ctx.history().events());
        m.put("eventsByReason", ctx.history().eventGroups());
        return m;
    }

    /** The version of the WebJar {@code org.webjars.npm:name} on the class path, from its Maven properties. */
    static String webJarVersion(String name) {
        String path = "/META-INF/maven/org.webjars.npm/" + name + "/pom.properties";
        try (InputStream in = AdminRoutes.class.getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("the " + name + " WebJar is not on the class path (" + path + ")");
            }
            Properties p = new Properties();
            p.load(in);
            return p.getProperty("version");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + path, e);
        }
    }

    private Route records(Map<String, String> params) {
        int offset;
        int limit;
        try {
            offset = intParam(params, "offset", 0, 0, Integer.MAX_VALUE);
            limit = intParam(params, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT);
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
        Tier tier = null;
        String t = params.get("tier");
        if (t != null) {
            try {
                tier = Tier.valueOf(t.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                return badRequest("tier '" + t + "' is unknown; allowed: memory, disk, pool");
            }
        }
        String ns = params.get("namespace");
        if (ns != null && !RecordKey.isValidNamespace(ns)) {
            return badRequest("namespace '" + ns + "' is invalid; allowed: 1.." + RecordKey.MAX_NAMESPACE_CHARS
                    + " characters of [A-Za-z0-9._-]");
        }
        Tier tierFilter = tier;
        CompletionStage<RecordPage> page = cache.records(ns, tierFilter, offset, limit);
        return completeWithFuture(page.thenApply(p -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("total", p.total());
            m.put("offset", offset);
            m.put("limit", limit);
            m.put("records", p.records().stream().map(Json::record).toList());
            return Json.ok(m);
        }));
    }

    private static int intParam(Map<String, String> params, String name, int dflt, int min, int max) {
        String v = params.get(name);
        if (v == null) {
            return dflt;
        }
        try {
            long n = Long.parseLong(v);
            if (n >= min && n <= max) {
                return (int) n;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(name + " '" + v + "' is invalid; allowed: an integer in " + min + ".."
                + max);
    }

    private Route withKey(String ns, String hex, Function<RecordKey, Route> inner) {
        RecordKey key;
        try {
            key = new RecordKey(ns, RecordKey.parseHash(hex));
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
        return inner.apply(key);
    }

    private Route describe(RecordKey key) {
        CompletionStage<RecordDescription> d = cache.describe(key);
        return completeWithFuture(d.thenApply(desc -> {
            if (!desc.found()) {
                return Json.error(StatusCodes.NOT_FOUND, "not_found", "no record " + key + " in any tier");
            }
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("key", key.toString());
            m.put("state", desc.state());
            m.put("locations", desc.record() == null ? List.of() : locations(desc.record()));
            m.put("record", desc.record() == null ? null : Json.record(desc.record()));
            m.put("chainComplete", desc.complete());
            m.put("chain", desc.chain().stream().map(Json::record).toList());
            return Json.ok(m);
        }));
    }

    private Route trace(RecordKey key) {
        Optional<List<TraceEvent>> trace = cache.traces().trace(key);
        if (trace.isEmpty()) {
            return complete(Json.error(StatusCodes.NOT_FOUND, "not_found", "no trace for " + key
                    + " (never seen, or older than the trace book keeps)"));
        }
        return complete(Json.ok(trace(key, trace.get())));
    }

    private Route traces(Map<String, String> params) {
        int limit;
        try {
            limit = intParam(params, "limit", DEFAULT_TRACE_LIMIT, 1, MAX_TRACE_LIMIT);
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
        String ns = params.get("namespace");
        if (ns != null && !RecordKey.isValidNamespace(ns)) {
            return badRequest("namespace '" + ns + "' is invalid; allowed: 1.." + RecordKey.MAX_NAMESPACE_CHARS
                    + " characters of [A-Za-z0-9._-]");
        }
        String prefix = params.get("prefix");
        if (prefix != null && prefix.isEmpty()) {
            // The trace book reads an empty prefix as none; given, it must have a digit.
            return badRequest("key prefix '' is invalid; allowed: 1..16 hex digits");
        }
        List<TraceBook.RecordTrace> found;
        try {
            found = cache.traces().search(ns, prefix, limit);
        } catch (IllegalArgumentException e) {
            return badRequest(e.getMessage());
        }
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("namespace", ns);
        m.put("prefix", prefix);
        m.put("limit", limit);
        m.put("traces", found.stream().map(t -> trace(t.key(), t.events())).toList());
        return complete(Json.ok(m));
    }

    private static Map<String, Object> trace(RecordKey key, List<TraceEvent> events) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", key.toString());
        m.put("events", events.stream().map(AdminRoutes::event).toList());
        return m;
    }

    private static Map<String, Object> event(TraceEvent e) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("time", MICROS.format(Instant.EPOCH.plus(e.epochMicros(), ChronoUnit.MICROS)));
        m.put("epochMicros", e.epochMicros());
        m.put("epochMillis", e.epochMillis());
        m.put("sinceMicros", e.sinceMicros() < 0 ? null : e.sinceMicros());
        m.put("actor", e.actor());
        m.put("path", e.path() == null ? null : e.path().toStringWithoutAddress());
        m.put("message", e.message());
        m.put("outcome", e.outcome());
        m.put("correlation", e.correlation() == 0 ? null : e.correlation());
        return m;
    }

    // --- mutating -----------------------------------------------------------------------------------------------

    private Route evict(RecordKey key) {
        CompletionStage<EvictOutcome> o = cache.evict(key);
        return completeWithFuture(o.thenApply(outcome -> switch (outcome.result()) {
            case EVICTED -> Json.ok(Map.of("evicted", key.toString(), "records", outcome.records()));
            case NOT_FOUND -> Json.error(StatusCodes.NOT_FOUND, "not_found", "no record " + key + " in any tier");
            case BUSY -> Json.error(StatusCodes.CONFLICT, "busy", key
                    + " or a descendant is being restored or published; try again");
        }));
    }

    private Route drain() {
        return completeWithFuture(ctx.drain().drain(DRAIN_TIMEOUT).thenApply(Json::ok));
    }

    private Route expire() {
        CompletionStage<ExpiryReport> r = cache.expireNow();
        return completeWithFuture(r.thenApply(report -> {
            Map<String, Object> m = new LinkedHashMap<>();
            m.put("tier", report.tier().label());
            m.put("maxAgeEnabled", report.enabled());
            m.put("expired", report.removed().size());
            m.put("keys", report.removed().stream().map(RecordKey::toString).toList());
            if (!report.enabled()) {
                m.put("detail", "max age is off (selene.prefix-cache.max-age): nothing expires");
            }
            return Json.ok(m);
        }));
    }

    /** Runs {@code inner} only with the right bearer token: missing → 401, wrong → 403, none configured → 403. */
    private Route authorized(Supplier<Route> inner) {
        return extractRequest(request -> optionalHeaderValueByName("Authorization", header -> {
            long given = java.util.stream.StreamSupport.stream(request.getHeaders().spliterator(), false)
                    .filter(h -> h.is("authorization")).count();
            if (given > 1) {
                // which one would count is not the client's to guess: the first, or the last a proxy added
                return complete(Json.error(StatusCodes.BAD_REQUEST, "bad_request",
                        "the Authorization header is repeated; allowed: once"));
            }
            if (!admin.tokenSet()) {
                return complete(Json.error(StatusCodes.FORBIDDEN, "forbidden",
                        "mutating endpoints are disabled: no admin token is configured (selene.admin.token)"));
            }
            if (header.isEmpty() || !header.get().regionMatches(true, 0, "Bearer ", 0, 7)) {
                HttpResponse r = Json.error(StatusCodes.UNAUTHORIZED, "unauthorized",
                        "this endpoint needs 'Authorization: Bearer TOKEN'");
                return complete(r.addHeader(RawHeader.create("WWW-Authenticate", "Bearer realm=\"selene\"")));
            }
            byte[] presented = header.get().substring(7).trim().getBytes(StandardCharsets.UTF_8);
            if (!MessageDigest.isEqual(presented, token)) {
                return complete(Json.error(StatusCodes.FORBIDDEN, "forbidden", "the bearer token is wrong"));
            }
            return inner.get();
        }));
    }

    // --- errors -------------------------------------------------------------------------------------------------

    private ExceptionHandler exceptions() {
        return ExceptionHandler.newBuilder().matchAny(t -> complete(errorFor(t))).build();
    }

    private HttpResponse errorFor(Throwable t) {
        Throwable root = Failures.root(t);
        HttpResponse unreadable = requestError(root, admin.maxBodyBytes());
        if (unreadable != null) {
            return unreadable;
        }
        if (root instanceof IllegalArgumentException) {
            return Json.error(StatusCodes.BAD_REQUEST, "bad_request", root.getMessage());
        }
        if (root instanceof TimeoutException) {
            return Json.error(StatusCodes.SERVICE_UNAVAILABLE, "timeout", "the node did not answer in time; retry");
        }
        LOG.error("admin request failed", root);
        return Json.error(StatusCodes.INTERNAL_SERVER_ERROR, "internal", "the request failed inside the node: "
                + root.getClass().getSimpleName() + " (details in the node's log)");
    }

    /** The answer to a request whose route did not answer within the admin server's request timeout. */
    static HttpResponse timedOut(String who) {
        return Json.error(StatusCodes.SERVICE_UNAVAILABLE, "timeout", "the " + who
                + " did not answer within the admin server's request timeout; retry");
    }

    /** Pekko's default rejection answers (404, 405, 400 ...) with their text moved into the JSON error shape. */
    static RejectionHandler rejections() {
        return RejectionHandler.defaultHandler().mapRejectionResponse(AdminRoutes::jsonError);
    }

    static HttpResponse jsonError(HttpResponse r) {
        HttpEntity e = r.entity();
        if (e.getContentType().equals(ContentTypes.APPLICATION_JSON)) {
            return r;
        }
        String text = e instanceof HttpEntity.Strict s ? s.getData().utf8String() : "";
        StatusCode status = r.status();
        String error = Json.errorCode(status);
        List<HttpHeader> headers = new ArrayList<>();
        r.getHeaders().forEach(headers::add);
        return Json.error(status, error, text).withHeaders(headers);
    }

    /** Every tier that holds {@code r}: where it is restored from, then its durable copy's tier. */
    private static List<String> locations(RecordView r) {
        return r.durable() && r.tier() != r.durableCopy() ? List.of(r.tier().label(), r.durableCopy().label())
                : List.of(r.tier().label());
    }
}
