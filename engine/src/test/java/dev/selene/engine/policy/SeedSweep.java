package dev.selene.engine.policy;

import dev.selene.engine.simulator.PolicyComparison;
import dev.selene.engine.trace.RowRule;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Not a test: the default policy against LRU and the oracle over a range of seeds of the comparison's generated
 * traces, summed up as {@code selene replay --compare --seeds} does (without the reuse policy, on several threads):
 * the means over LRU, the worst loss to LRU and the lowest share of the oracle on held-out rows where the oracle beats
 * LRU by more than 5 points, with every row that breaks a rule the default is held to listed. Run with {@code java
 * -cp engine/target/classes:engine/target/test-classes dev.selene.engine.policy.SeedSweep FIRST_SEED LAST_SEED
 * [THREADS]}; seeds 41-80 take about a minute and a half on two threads.
 */
public final class SeedSweep {

    private SeedSweep() {
    }

    public static void main(String[] args) throws Exception {
        int first = Integer.parseInt(args[0]);
        int last = Integer.parseInt(args[1]);
        int threads = args.length > 2 ? Integer.parseInt(args[2]) : 2;
        List<String> policies = List.of("lru", WorthPolicy.NAME);
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<List<PolicyComparison.Row>>> runs = new ArrayList<>();
        for (int s = first; s <= last; s++) {
            long seed = s;
            runs.add(pool.submit(() -> new PolicyComparison(RowRule.LAST_FULL, 8)
                    .run(PolicyComparison.traces(null, null, seed, seed, 4000), policies, row -> { })));
        }
        List<PolicyComparison.Row> all = new ArrayList<>();
        for (Future<List<PolicyComparison.Row>> run : runs) {
            all.addAll(run.get());
        }
        pool.shutdown();
        System.out.printf(Locale.ROOT, "seeds %d-%d: %d rows%n", first, last, all.size());
        System.out.print(PolicyComparison.means(all, policies));
        System.out.print(PolicyComparison.summary(all, policies));
        PolicyComparison.breaches(all, WorthPolicy.NAME).forEach(System.out::println);
    }
}
