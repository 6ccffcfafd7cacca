package dev.keel.jpf.ext;

import gov.nasa.jpf.Config;
import gov.nasa.jpf.vm.TimeModel;
import gov.nasa.jpf.vm.VM;

/**
 * A clock that does not move: {@code System.nanoTime()} and {@code currentTimeMillis()} return 0
 * in every state (configured as {@code vm.time.class}).
 *
 * <p>jpf-core's default time model reads the host's clock, so a time the kernel keeps in a local
 * variable (the start of a drain, for its JFR event) differs between two paths that reach the
 * same program state, and JPF's state matching, which is what lets a search of all
 * interleavings end, never merges them: {@code CloseDriver} gave no result in five minutes.
 * With the clock frozen such states are equal again, and it takes under half a minute. The price: no deadline of the kernel passes by itself, so a path
 * on which one does (the reclaimer giving up on the collector after its deadline) is not
 * explored; timed waits and parks may still return early, as JPF lets them.
 */
public final class FrozenTime implements TimeModel {

    public FrozenTime(VM vm, Config conf) {
    }

    @Override
    public long currentTimeMillis() {
        return 0;
    }

    @Override
    public long nanoTime() {
        return 0;
    }
}
