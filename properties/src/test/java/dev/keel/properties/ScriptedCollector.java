package dev.keel.properties;

import dev.keel.AllocatorLock;
import dev.keel.MemoryPressureCallback;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.function.LongConsumer;

/**
 * A pressure callback that plays the garbage collector by script: blocks their owners dropped
 * wait in a queue, and each pressure round releases the allocator lock, frees up to
 * {@code budget} of them (oldest first), and re-takes the lock, as the callback contract asks.
 * A round can be told to misbehave: return without re-taking the lock, or throw after re-taking
 * it. The same script drives the kernel (through {@link AllocatorLock}) and {@link AllocatorModel}.
 */
final class ScriptedCollector implements MemoryPressureCallback {

    enum Mode {
        NORMAL("behaves"), NO_RELOCK("returns without re-taking the lock"), THROW("throws after re-taking the lock");

        final String description;

        Mode(String description) {
            this.description = description;
        }
    }

    private final int budget;
    private final LongConsumer free;
    final Deque<Long> garbage = new ArrayDeque<>();
    private Mode next = Mode.NORMAL;
    private int rounds;
    final StringBuilder log = new StringBuilder();

    ScriptedCollector(int budget, LongConsumer free) {
        this.budget = budget;
        this.free = free;
    }

    int rounds() {
        return rounds;
    }

    void misbehaveNextRound(Mode mode) {
        next = mode;
    }

    @Override
    public void onPressure(AllocatorLock lock, long requestedBytes) {
        lock.unlock();
        Mode mode = collect(requestedBytes);
        if (mode == Mode.NO_RELOCK) {
            return;
        }
        lock.lock();
        if (mode == Mode.THROW) {
            throw new InjectedFault("collector #" + rounds);
        }
    }

    /** One round without the lock: frees up to the budget; returns how the round ends. */
    Mode collect(long requestedBytes) {
        rounds++;
        Mode mode = next;
        next = Mode.NORMAL;
        log.append("round ").append(rounds).append(" (").append(requestedBytes).append(" B):");
        for (int i = 0; i < budget && !garbage.isEmpty(); i++) {
            long handle = garbage.poll();
            free.accept(handle);
            log.append(" h").append(handle);
        }
        log.append("; ");
        return mode;
    }
}
