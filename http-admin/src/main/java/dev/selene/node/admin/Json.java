package dev.selene.node.admin;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import dev.selene.actors.value.RecordView;
import dev.selene.engine.key.RecordKey;
import dev.selene.engine.layout.Layout;
import org.apache.pekko.http.javadsl.model.ContentTypes;
import org.apache.pekko.http.javadsl.model.HttpEntities;
import org.apache.pekko.http.javadsl.model.HttpResponse;
import org.apache.pekko.http.javadsl.model.StatusCode;
import org.apache.pekko.http.javadsl.model.StatusCodes;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/** JSON bodies of the admin API: one mapper, the error shape, and record views as maps. */
final class Json {

    static final ObjectMapper MAPPER = new ObjectMapper().disable(SerializationFeature.FAIL_ON_EMPTY_BEANS);

    private Json() {
    }

    static String write(Object value) {
        try {
            return MAPPER.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("cannot write JSON: " + e.getOriginalMessage(), e);
        }
    }

    static HttpResponse ok(Object value) {
        return response(StatusCodes.OK, value);
    }

    static HttpResponse response(StatusCode status, Object value) {
        return HttpResponse.create().withStatus(status)
                .withEntity(HttpEntities.create(ContentTypes.APPLICATION_JSON, write(value)));
    }

    /** A layout as {@code /status} shows it, on a cache node and on a pool manager alike. */
    static Map<String, Object> layout(Layout l) {
        Map<String, Object> layout = new LinkedHashMap<>();
        layout.put("name", l.name());
        layout.put("ranks", l.ranks());
        layout.put("pageBytes", l.pageBytes());
        layout.put("rowBytes", l.rowBytes());
        layout.put("pagesPerRecord", l.pagesPerRecord());
        layout.put("tokensPerRecord", l.tokensPerRecord());
        layout.put("slotBytes", l.slotBytes());
        return layout;
    }

    /** The {@code error} code of {@code status} where no finer one applies: its reason in snake case. */
    static String errorCode(StatusCode status) {
        return status.reason().toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9]+", "_");
    }

    /** The error body every 4xx and 5xx answer carries: {@code {"status", "error", "detail"}}. */
    static HttpResponse error(StatusCode status, String error, String detail) {
        return response(status, errorBody(status, error, detail));
    }

    static Map<String, Object> errorBody(StatusCode status, String error, String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("status", status.intValue());
        body.put("error", error);
        body.put("detail", detail == null ? "" : detail);
        return body;
    }

    static String key(RecordKey key) {
        return key == null ? null : key.toString();
    }

    static Map<String, Object> record(RecordView v) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("key", key(v.key()));
        m.put("namespace", v.key().namespace());
        m.put("hash", v.key().hashHex());
        m.put("parent", key(v.parent()));
        m.put("hasRow", v.hasRow());
        m.put("tier", v.tier().label());
        m.put("state", v.state());
        m.put("slots", v.slots());
        m.put("bytes", v.bytes());
        m.put("idleMillis", v.idleMillis());
        m.put("durable", v.durable());
        m.put("onDisk", v.onDisk());
        return m;
    }
}
