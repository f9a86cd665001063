package dev.selene.node.admin;

import org.apache.pekko.event.LoggingAdapter;
import org.apache.pekko.http.ParsingErrorHandler;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.scaladsl.model.ErrorInfo;
import org.apache.pekko.http.scaladsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;
import org.apache.pekko.http.scaladsl.settings.ServerSettings;

import java.util.Locale;

/**
 * Answers requests too malformed to reach the routes (a bad request line, headers too long, an URI too long)
 * with the admin API's JSON error shape instead of Pekko's plain text. Loaded by Pekko HTTP by class name.
 */
public final class JsonParsingErrorHandler extends ParsingErrorHandler {

    public JsonParsingErrorHandler() {
    }

    @Override
    public HttpResponse handle(StatusCode status, ErrorInfo info, LoggingAdapter log, ServerSettings settings) {
        log.debug("malformed request: {}", info.formatPretty());
        String error = status.reason().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
        // A method HTTP does not define (501) or another HTTP version (505) is the client's bad input: a 4xx, so
        // that a server error always means the server's own fault.
        if (status.intValue() == 501) {
            return Json.error(StatusCodes.BAD_REQUEST, "unknown_method", info.summary());
        }
        if (status.intValue() == 505) {
            return Json.error(StatusCodes.BAD_REQUEST, "http_version_not_supported", info.summary());
        }
        return Json.error(status, error, info.summary());
    }
}
