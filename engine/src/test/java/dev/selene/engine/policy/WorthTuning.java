package dev.selene.engine.policy;

import dev.selene.engine.config.CacheConfig;
import dev.selene.engine.layout.Layout;
import dev.selene.engine.simulator.PolicyComparison;
import dev.selene.engine.simulator.ReplaySimulator;
import dev.selene.engine.trace.RowRule;
import dev.selene.engine.trace.TraceRequest;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Not a test: the measurement the worth policy's constants were chosen by, on the traces the comparison marks as
 * tuned on only. Run with {@code java -cp ... dev.selene.engine.policy.WorthTuning SYNTHETIC_TRACE EXPONENT[:d]...}, {@code :d} for the
 * duel.
 */
public final class WorthTuning {

    private WorthTuning() {
    }

    public static void main(String[] args) throws Exception {
        List<TraceRequest> synthetic = read(Path.of(args[0]));
        List<PolicyComparison.Trace> traces = PolicyComparison.traces("synthetic_trace", synthetic, 1, 4000).stream()
                .filter(PolicyComparison.Trace::tuned).toList();
        for (PolicyComparison.Trace t : traces) {
            List<TraceRequest> requests = t.requests().get();
            for (String layout : List.of("qwen-tp1", "deepseek-tp4")) {
                for (long warm : PolicyComparison.MEMORY.get(layout)) {
                    ReplaySimulator sim = new ReplaySimulator(CacheConfig.memoryOnly(Layout.preset(layout), warm)
                            .withConcurrency(8), RowRule.LAST_FULL);
                    StringBuilder b = new StringBuilder(String.format(Locale.ROOT, "%-16s %-12s %5d MiB lru %.4f",
                            t.name(), layout, warm >> 20, sim.run(requests, "lru").hitRatio()));
                    b.append(String.format(Locale.ROOT, "  reuse %.4f", sim.run(requests, "reuse").hitRatio()));
                    for (int i = 1; i < args.length; i++) {
                        b.append(String.format(Locale.ROOT, "  %s %.4f", args[i], sim.run(requests,
                                new WorthPolicy(Double.parseDouble(args[i].split(":")[0]),
                                args[i].endsWith(":d"))).hitRatio()));
                    }
                    b.append(String.format(Locale.ROOT, "  oracle %.4f", sim.run(requests, "oracle").hitRatio()));
                    System.out.println(b);
                }
            }
        }
    }

    /** A Mooncake trace, read with a pattern (the engine has no JSON reader; the node's reader checks more). */
    static List<TraceRequest> read(Path p) throws Exception {
        List<TraceRequest> out = new ArrayList<>();
        for (String line : Files.readAllLines(p)) {
            if (line.isBlank()) {
                continue;
            }
            String[] ids = field(line, "\"hash_ids\"\\s*:\\s*\\[([^\\]]*)\\]").split(",");
            long[] hashIds = new long[ids[0].isBlank() ? 0 : ids.length];
            for (int i = 0; i < hashIds.length; i++) {
                hashIds[i] = Long.parseLong(ids[i].trim());
            }
            out.add(new TraceRequest(Long.parseLong(field(line, "\"timestamp\"\\s*:\\s*(\\d+)")),
                    Integer.parseInt(field(line, "\"input_length\"\\s*:\\s*(\\d+)")),
                    Integer.parseInt(field(line, "\"output_length\"\\s*:\\s*(\\d+)")), hashIds));
        }
        return out;
    }

    private static String field(String line, String pattern) {
        Matcher m = Pattern.compile(pattern).matcher(line);
        if (!m.find()) {
            throw new IllegalArgumentException("no " + pattern + " in " + line);
        }
        return m.group(1);
    }
}
