package dev.selene.engine.intake;

import dev.selene.engine.layout.Layout;

/**
 * How many host slots the intake gets: room for two rows per active request at the configured
 * concurrency plus two transfer windows, never less than two windows, shrunk to fit the host budget.
 *
 * @param desiredSlots intake the formula asks for
 * @param slots        intake granted
 * @param warmSlots    warm-tier slots
 * @param warning      the one startup warning when the intake had to shrink, else null
 */
public record IntakeSizing(int desiredSlots, int slots, int warmSlots, String warning) {

    /** Total slots of the pool: warm plus intake. */
    public int totalSlots() {
        return warmSlots + slots;
    }

    /**
     * Sizes the intake.
     *
     * @param layout          the model layout
     * @param concurrency     active requests the engine runs at once (≥ 1)
     * @param windowSlots     slots of one transfer window (≥ 1)
     * @param warmBytes       the warm tier's size (0 allowed)
     * @param hostBudgetBytes the most host memory the pool may take, warm and intake together
     */
    public static IntakeSizing compute(Layout layout, int concurrency, int windowSlots, long warmBytes,
                                       long hostBudgetBytes) {
        if (concurrency < 1) {
            throw new IllegalArgumentException("concurrency must be at least 1, was " + concurrency);
        }
        if (windowSlots < 1) {
            throw new IllegalArgumentException("transfer window must be at least 1 slot, was " + windowSlots);
        }
        long slotBytes = layout.slotBytes();
        long warm = warmBytes / slotBytes;
        long floor = 2L * windowSlots;
        long desired = Math.max(floor, 2L * concurrency * layout.rowPieces() + floor);
        long budgetSlots = hostBudgetBytes / slotBytes;
        long room = Math.max(0, budgetSlots - warm);
        long granted = Math.max(floor, Math.min(desired, room));
        if (warm + granted > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("warm size " + warmBytes + " bytes is too large for " + slotBytes
                    + "-byte slots");
        }
        String warning = null;
        if (granted < desired) {
            warning = "intake shrunk to " + granted + " slots (" + mib(granted * slotBytes) + ") from the "
                    + desired + " slots (" + mib(desired * slotBytes) + ") that " + concurrency
                    + " concurrent requests need; the host budget of " + mib(hostBudgetBytes) + " holds a "
                    + mib(warm * slotBytes) + " warm tier; needs " + mib((warm + desired) * slotBytes)
                    + " in all: raise the budget or lower the warm size or concurrency";
        }
        return new IntakeSizing((int) Math.min(desired, Integer.MAX_VALUE), (int) granted, (int) warm, warning);
    }

    /**
     * Why a warm tier of {@code warmBytes} cannot start under {@code hostBudgetBytes}, or null when it can: the
     * intake shrinks to fit the budget, but never below two transfer windows, so warm plus those two windows must fit.
     * The reason reads after "is invalid: " and ends with what is allowed; {@code budgetSetting} names the setting
     * that raises the budget, or is null where the caller offers none.
     */
    public static String budgetProblem(Layout layout, int windowSlots, long warmBytes, long hostBudgetBytes,
                                       String budgetSetting) {
        long slotBytes = layout.slotBytes();
        long largestWarm = (hostBudgetBytes / slotBytes - 2L * windowSlots) * slotBytes;
        if (warmBytes <= largestWarm) {
            return null;
        }
        return "the warm tier and the smallest intake (two transfer windows, " + mib(2L * windowSlots * slotBytes)
                + ") do not fit the host budget of " + mib(hostBudgetBytes) + "; allowed: "
                + (largestWarm > 0 ? "a warm tier of at most " + (largestWarm >> 20) + " MiB" : "")
                + (budgetSetting == null ? "" : (largestWarm > 0 ? ", or " : "") + "a larger " + budgetSetting);
    }

    private static String mib(long bytes) {
        return ((bytes + (1 << 20) - 1) >> 20) + " MiB";
    }
}
