package dev.keel.properties;

import dev.keel.properties.ArenaCommand.Free;
import java.util.List;

/** Resolves a generated free target to an address, from the model's state. */
final class FreeTargets {

    private FreeTargets() {
    }

    static long resolve(Free free, ArenaModel model) {
        long g = model.granularity;
        long top = model.base + model.next;                   // first unused address
        return switch (free.target()) {
            case LIVE -> pick(model.liveAddresses(), free.index(), top);
            case DEAD -> pick(model.deadAddresses(), free.index(), top);
            case UNKNOWN -> switch (free.index() % 4) {
                case 0 -> top;                                // never handed out (yet)
                case 1 -> pick(model.liveAddresses(), 0, top) + Math.max(1, g / 2); // inside a live slice
                case 2 -> top + g;
                default -> model.base + 1;
            };
            case FOREIGN -> switch (free.index() % 4) {
                case 0 -> model.base - g;                     // just below the reserve
                case 1 -> model.base + model.total;           // just past it (another arena's range)
                case 2 -> 0L;
                default -> -1L;                               // 2^64 - 1
            };
        };
    }

    private static long pick(List<Long> addresses, int index, long fallback) {
        return addresses.isEmpty() ? fallback : addresses.get(index % addresses.size());
    }
}
