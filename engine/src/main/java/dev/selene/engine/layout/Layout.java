package dev.selene.engine.layout;

import java.util.List;
import java.util.Locale;

/**
 * The shape of a model's KV state as Selene stores it: how many tensor-parallel ranks, how many bytes each
 * rank keeps per page and per row, and how many pages make one record.
 *
 * <p>A slot is {@code ranks × pageBytes}; rank r owns the share at {@code r × pageBytes} in every slot. A row
 * of {@code rowBytes} per rank occupies {@link #rowPieces()} slots, laid out per rank exactly as pages are; its
 * last piece may be partly used.
 *
 * @param name           preset name, or "custom"
 * @param ranks          tensor-parallel ranks (≥ 1)
 * @param pageBytes      bytes per rank per page; a multiple of 4096 so that pages can go to disk with O_DIRECT
 * @param rowBytes       bytes per rank of the per-sequence state that lets a request resume at a record
 * @param pagesPerRecord KV pages in one record
 * @param tokensPerPage  tokens covered by one page
 */
public record Layout(String name, int ranks, int pageBytes, int rowBytes, int pagesPerRecord, int tokensPerPage) {

    /** Alignment of every page and slot: the O_DIRECT and page-size unit. */
    public static final int ALIGNMENT_BYTES = 4096;

    public Layout {
        require(ranks >= 1 && ranks <= 64, "ranks", "an integer in 1..64", ranks);
        require(pageBytes >= ALIGNMENT_BYTES && pageBytes % ALIGNMENT_BYTES == 0 && pageBytes <= (64 << 20),
                "page-bytes", "a multiple of 4096 between 4096 and 64 MiB", pageBytes);
        require(rowBytes >= 0 && rowBytes <= (1 << 30), "row-bytes", "0..1 GiB", rowBytes);
        require(pagesPerRecord >= 1 && pagesPerRecord <= 4096, "pages-per-record", "an integer in 1..4096",
                pagesPerRecord);
        require(tokensPerPage >= 1 && tokensPerPage <= 65536, "tokens-per-page", "an integer in 1..65536",
                tokensPerPage);
    }

    /** DeepSeek-like, tensor-parallel 4: 64 KiB pages per rank, 512-token records, a row of 23 pages. */
    public static Layout deepseekTp4() {
        return new Layout("deepseek-tp4", 4, 64 << 10, 23 * (64 << 10), 8, 64);
    }

    /** Qwen-like hybrid, tensor-parallel 1: 16 KiB pages, 512-token records, a row of 135 pages. */
    public static Layout qwenTp1() {
        return new Layout("qwen-tp1", 1, 16 << 10, 135 * (16 << 10), 32, 16);
    }

    /** Tiny layout for tests: two ranks, 4 KiB pages, a row that does not fill its last piece. */
    public static Layout small() {
        return new Layout("small", 2, 4096, 2 * 4096 + 100, 2, 16);
    }

    /** Names accepted by {@link #preset(String)}. */
    public static final List<String> PRESETS = List.of("deepseek-tp4", "qwen-tp1", "small");

    /** The preset of that name; an {@link IllegalArgumentException} naming the allowed values otherwise. */
    public static Layout preset(String name) {
        return switch (name.toLowerCase(Locale.ROOT)) {
            case "deepseek-tp4" -> deepseekTp4();
            case "qwen-tp1" -> qwenTp1();
            case "small" -> small();
            default -> throw new IllegalArgumentException(
                    "layout '" + name + "' is unknown; allowed: " + String.join(", ", PRESETS));
        };
    }

    /** Bytes of one slot: every rank's share of one page. */
    public long slotBytes() {
        return (long) ranks * pageBytes;
    }

    /** Slots a row occupies: {@code ceil(rowBytes / pageBytes)}. */
    public int rowPieces() {
        return (rowBytes + pageBytes - 1) / pageBytes;
    }

    /** Slots a record occupies: its pages, plus its row pieces when it has a row. */
    public int slotsPerRecord(boolean hasRow) {
        return pagesPerRecord + (hasRow ? rowPieces() : 0);
    }

    /** Bytes of one rank's share of piece {@code piece} of a record (pages first, then row pieces). */
    public int pieceBytes(int piece) {
        if (piece < pagesPerRecord) {
            return pageBytes;
        }
        int rowPiece = piece - pagesPerRecord;
        return rowPiece < rowPieces() - 1 ? pageBytes : rowBytes - (rowPieces() - 1) * pageBytes;
    }

    /** Payload bytes of a record across all ranks (a partly used last row piece counts only its used part). */
    public long recordBytes(boolean hasRow) {
        return (long) ranks * ((long) pagesPerRecord * pageBytes + (hasRow ? rowBytes : 0));
    }

    /** Tokens covered by one record. */
    public int tokensPerRecord() {
        return pagesPerRecord * tokensPerPage;
    }

    private static void require(boolean ok, String setting, String allowed, long value) {
        if (!ok) {
            throw new IllegalArgumentException("layout." + setting + " = " + value + " is invalid; allowed: " + allowed);
        }
    }
}
