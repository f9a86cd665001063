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
 * traces, summed up by the rules the default is held to (the worst loss to LRU, on held-out and tuned-on rows; the
 * lowest share of the oracle on held-out rows where the oracle beats LRU by more than 5 points), with every row that
 * breaks one listed. Run with {@code java -cp engine/target/classes:engine/target/test-classes
 * dev.selene.engine.policy.SeedSweep FIRST_SEED LAST_SEED [THREADS]}; seeds 41-80 take about a minute and a half
 * on two threads.
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
        double heldSum = 0;
        int held = 0;
        double heldWorst = Double.MAX_VALUE;
        double tunedWorst = Double.MAX_VALUE;
        double tunedSum = 0;
        int tuned = 0;
        double lowestShare = Double.MAX_VALUE;
        List<PolicyComparison.Row> all = new ArrayList<>();
        for (Future<List<PolicyComparison.Row>> run : runs) {
            for (PolicyComparison.Row r : run.get()) {
                all.add(r);
                double points = r.pointsOverLru(WorthPolicy.NAME);
                if (r.tuned()) {
                    tunedWorst = Math.min(tunedWorst, points);
                    tunedSum += points;
                    tuned++;
                } else {
                    heldWorst = Math.min(heldWorst, points);
                    heldSum += points;
                    held++;
                }
                if (!r.tuned() && r.oracleWellAboveLru()) {
                    lowestShare = Math.min(lowestShare, r.ofOracle(WorthPolicy.NAME));
                }
            }
        }
        pool.shutdown();
        System.out.printf(Locale.ROOT, "seeds %d-%d: held out mean %+.3f points, worst %+.2f; tuned on mean %+.3f, "
                + "worst %+.2f; lowest share of the oracle where it beats lru by 5 points %.3f%n", first, last,
                heldSum / held, heldWorst, tunedSum / tuned, tunedWorst, lowestShare);
        PolicyComparison.breaches(all, WorthPolicy.NAME).forEach(System.out::println);
    }
}
