package dev.selene.node.admin;

import org.apache.pekko.http.javadsl.model.HttpEntity;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.Query;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.javadsl.server.AllDirectives;
import org.apache.pekko.http.javadsl.server.Route;
import org.apache.pekko.http.scaladsl.model.EntityStreamSizeException;
import org.apache.pekko.http.scaladsl.model.IllegalRequestException;
import org.apache.pekko.http.scaladsl.model.IllegalUriException;
import org.apache.pekko.japi.Pair;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * Directives the routes of both admin servers (a cache node's and a pool manager's) share: each route names the
 * query parameters it takes, and any other, or one given twice, is a 400; the status page's files are served
 * without letting a client's {@code ..} reach Pekko's file directive, which would log a warning for it.
 */
abstract class AdminDirectives extends AllDirectives {

    private static final Logger LOG = LoggerFactory.getLogger(AdminDirectives.class);

    /**
     * Runs {@code inner} with the request's query parameters, by name, when each is one of {@code defined} and
     * given once; otherwise answers 400 naming the first that is not.
     */
    Route query(List<String> defined, Function<Map<String, String>, Route> inner) {
        return extractUri(uri -> {
            Query query;
            try {
                query = uri.query();
            } catch (IllegalUriException e) {
                return badRequest("the query is malformed: " + e.info().summary());
            }
            Map<String, String> params = new LinkedHashMap<>();
            for (Pair<String, String> p : query.toList()) {
                String name = p.first();
                if (name.isEmpty() && p.second().isEmpty()) {
                    continue; // a stray '&' ("?&", "?a=1&") names nothing
                }
                if (!defined.contains(name)) {
                    return badRequest("query parameter '" + name + "' is unknown; allowed: "
                            + (defined.isEmpty() ? "none" : String.join(", ", defined)));
                }
                if (params.putIfAbsent(name, p.second()) != null) {
                    return badRequest("query parameter '" + name + "' is repeated; allowed: once");
                }
            }
            return inner.apply(params);
        });
    }

    /** Runs {@code inner} when the request has no query parameters; otherwise answers 400 naming the first. */
    Route noQuery(Supplier<Route> inner) {
        return query(List.of(), params -> inner.get());
    }

    /**
     * The files of the class-path directory {@code dir} under the path matched so far. A path with a segment
     * {@code ..} or one holding an encoded slash ({@code %2e%2e}, {@code %2f}) is rejected here, as Pekko's
     * directive would reject it (404), but logged at DEBUG: Pekko logs a warning for each, which any client could
     * use to fill the operator's terminal.
     */
    Route resourceDirectory(String dir) {
        return extractUri(uri -> {
            for (String segment : uri.pathSegments()) {
                if (segment.equals("..") || segment.indexOf('/') >= 0) {
                    LOG.debug("not serving {}: a path segment is '..' or holds a '/'", uri.path());
                    return reject();
                }
            }
            return getFromResourceDirectory(dir);
        });
    }

    /**
     * Runs {@code inner} when the request has no query parameters and no body beyond an empty JSON object (an
     * endpoint that takes no input: anything sent to it would be ignored, and the client led to think it had been
     * read); otherwise answers 400. The body must already be read whole (the routes read every body up to the size
     * limit first).
     */
    Route noInput(Supplier<Route> inner) {
        return noQuery(() -> extractRequest(req -> {
            if (req.entity() instanceof HttpEntity.Strict strict && !isEmptyObject(strict.getData().utf8String())) {
                return badRequest("this endpoint takes no parameters: send no body (or {}); got "
                        + strict.getData().size() + " bytes");
            }
            return inner.get();
        }));
    }

    private static boolean isEmptyObject(String body) {
        String bare = body.strip();
        return bare.isEmpty() || bare.startsWith("{") && bare.endsWith("}")
                && bare.substring(1, bare.length() - 1).isBlank();
    }

    /**
     * Refuses bodies over {@code maxBytes} at once when their length is declared (413), and reads others whole up
     * to it, within 10 s (a longer one fails the request with a 413, a slower one with a 408: see
     * {@link #requestError}). Every route then sees its body read, so none is answered before its request has
     * arrived whole (Pekko warns of each such early answer).
     */
    Route bodyLimit(long maxBytes, Supplier<Route> inner) {
        return extractRequest(req -> {
            OptionalLong declared = req.entity().getContentLengthOption();
            if (declared.isPresent() && declared.getAsLong() > maxBytes) {
                return complete(tooLarge(declared.getAsLong() + " bytes", maxBytes));
            }
            return toStrictEntity(Duration.ofSeconds(10), maxBytes, inner);
        });
    }

    private static HttpResponse tooLarge(String size, long maxBytes) {
        return Json.error(StatusCodes.PAYLOAD_TOO_LARGE, "payload_too_large", "request body of " + size
                + " is over the limit of " + maxBytes + " bytes (selene.admin.max-body)");
    }

    /**
     * The JSON answer to {@code root} when it is a request that could not be read (a body over {@code maxBytes}, one
     * that did not arrive in time, a malformed one), or null when it is not.
     */
    static HttpResponse requestError(Throwable root, long maxBytes) {
        if (root instanceof EntityStreamSizeException) {
            return tooLarge("more than " + maxBytes + " bytes", maxBytes);
        }
        if (root instanceof IllegalRequestException bad) {
            if (bad.status().intValue() == StatusCodes.PAYLOAD_TOO_LARGE.intValue()
                    || bad.info().summary().startsWith("Request too large")) {
                return tooLarge("more than " + maxBytes + " bytes", maxBytes);
            }
            return Json.error(bad.status(), Json.errorCode(bad.status()), bad.info().summary());
        }
        return null;
    }

    /** A 400 JSON error with {@code detail}. */
    Route badRequest(String detail) {
        return complete(Json.error(StatusCodes.BAD_REQUEST, "bad_request", detail));
    }
}
