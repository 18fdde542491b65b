package com.example.store;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import com.example.util.Strings;
import static com.example.util.Strings.requireNonBlank;

/**
 * A repository in memory.
 */
public class MemoryRepository<T> extends AbstractRepository implements Repository<T> {
    private final Map<String, T> data = new HashMap<>();
    private Auditor auditor;

    public MemoryRepository() {
        this.auditor = new Auditor();
    }

    @Override
    public Optional<T> find(String id) {
        requireNonBlank(id);
        check();
        return Optional.ofNullable(data.get(Strings.trim(id)));
    }

    @Override
    public void save(String id, T value) {
        auditor.record(id);
        this.log("save");
        data.put(id, value);
    }

    /** Audits writes. */
    static class Auditor {
        void record(String id) {
            Strings.trim(id);
        }
    }
}
