package dev.selene.node.admin;

import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

/**
 * Answers requests too malformed to reach the routes (a bad request line, headers too long, an URI too long)
 * with the admin API's JSON error shape instead of Pekko's plain text. Loaded by Pekko HTTP by class name.
 */
public final class JsonParsingErrorHandler extends ParsingErrorHandler {

    /** Pekko's summary of a request whose method it does not take. */
    private static final String UNSUPPORTED_METHOD = "Unsupported HTTP method";
    private static final String METHODS = "GET, HEAD, POST, PUT, DELETE, PATCH, OPTIONS, TRACE, CONNECT";

    public JsonParsingErrorHandler() {
    }

    @Override
    public HttpResponse handle(StatusCode status, ErrorInfo info, LoggingAdapter log, ServerSettings settings) {
        log.debug("malformed request: {}", info.formatPretty());
        String error = Json.errorCode(status);
        // A method HTTP does not define is the client's bad input: a 400, so that a server error always means the
        // server's own fault. Pekko answers it with 501, or with 400 once the method is longer than the admin
        // server's parser reads (AdminServer), and names it "Unsupported HTTP method" either way.
        if (status.intValue() == 501 || info.summary().equals(UNSUPPORTED_METHOD)) {
            return Json.error(StatusCodes.BAD_REQUEST, "unknown_method", "the request line must start with a method"
                    + " HTTP defines and a space; allowed: " + METHODS);
        }
        // Pekko answers 505 whenever the request line does not end in HTTP/1.0 or HTTP/1.1 after the target,
        // without saying more: another HTTP version and a malformed line (two spaces after the method) alike.
        if (status.intValue() == 505) {
            return Json.error(StatusCodes.BAD_REQUEST, "http_version_not_supported", "the request line is malformed"
                    + " or its HTTP version is not supported; allowed: METHOD, one space, the path, one space and"
                    + " HTTP/1.1 or HTTP/1.0");
        }
        return Json.error(status, error, info.summary());
    }
}
