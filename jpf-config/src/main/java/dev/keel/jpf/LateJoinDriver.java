package dev.keel.jpf;

import dev.keel.DeviceAllocator;
import dev.keel.GcReclaimer;
import dev.keel.HostLock;

/**
 * A thread too late for a collection waits for the next one (spec {@code LockOrdering}: its
 * {@code late} set, {@code ReclaimTakeOver}, and the premise of {@code OomOnlyAfterReclaim}).
 *
 * <p>Scenario: a {@link DeviceAllocator} of 2 bytes, one garbage block from the start and one
 * held by thread {@code q}; the real {@link GcReclaimer} with {@link HostLock#NONE}, whose
 * collection step frees, through the allocator, exactly the blocks that are garbage when it runs
 * (what a gc call would find). Thread {@code p} allocates 1 byte. Thread {@code q} drops its block
 * (garbage from then on), then allocates 1 byte. Whatever the interleaving, some collection runs
 * after {@code q}'s drop and within {@code q}'s round: its own, or one it joined before its gc
 * call. At the end both allocations succeeded with different handles and the allocator is full.
 *
 * <p>Catches: a reclaimer whose late joiner takes the running collection as its round (the
 * interleaving: {@code p}'s collection frees the first block, {@code q} drops its block and runs
 * out of memory after that collection's gc call, joins it, and retries with nothing handed to it).
 * Not: what the hand-off does with several waiters ({@link HandOffDriver}), single flight
 * ({@link SingleFlightDriver}), the host lock ({@link LockOrderingDriver}).
 */
public final class LateJoinDriver implements Runnable {

    public static void main(String[] args) {
        Scenario.runAsProgram(new LateJoinDriver());
    }

    /** Runs the scenario once; throws {@link AssertionError} if a property fails. */
    @Override
    public void run() {
        Garbage garbage = new Garbage();
        DeviceAllocator[] device = new DeviceAllocator[1];
        GcReclaimer reclaimer = LockOrderingDriver.newReclaimer(HostLock.NONE, () -> {
            for (long block : garbage.takeAll()) { // the collection: what is garbage now is freed
                device[0].free(block);
            }
        });
        DeviceAllocator allocator = DeviceAllocator.builder(2).pressureCallback(reclaimer).build();
        device[0] = allocator;
        garbage.drop(allocator.allocate(1));
        long held = allocator.allocate(1);
        long[] got = new long[2];
        new Scenario("late-join")
                .sharing(allocator, garbage, device, got)
                .thread("p", () -> got[0] = LockOrderingDriver.allocateOrZero(allocator))
                .thread("q", () -> {
                    garbage.drop(held);
                    got[1] = LockOrderingDriver.allocateOrZero(allocator);
                })
                .runAll();

        Scenario.check(got[0] != 0 && got[1] != 0, "an allocation ran out of memory although its garbage was"
                + " reclaimable: p got " + got[0] + ", q got " + got[1] + " (a thread too late for a collection"
                + " took it as its round)");
        Scenario.check(got[0] != got[1], "both allocations got handle " + got[0]);
        Scenario.check(allocator.freeBytes() == 0, "allocator has " + allocator.freeBytes() + " free bytes, expected 0");
    }

    /** The blocks dropped and not yet collected. */
    private static final class Garbage {
        private final long[] blocks = new long[2];
        private int count;

        synchronized void drop(long block) {
            blocks[count++] = block;
        }

        synchronized long[] takeAll() {
            long[] due = new long[count];
            System.arraycopy(blocks, 0, due, 0, count);
            count = 0;
            return due;
        }
    }
}
