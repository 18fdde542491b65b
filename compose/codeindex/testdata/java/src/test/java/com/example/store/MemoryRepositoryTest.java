package com.example.store;

import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class MemoryRepositoryTest {
    private MemoryRepository<String> repo() {
        return new MemoryRepository<>();
    }

    @Test
    void testFind() {
        MemoryRepository<String> r = repo();
        r.save("a", "b");
        assertTrue(r.find("a").isPresent());
    }

    @Test
    void savesTwice() {
        var r = new MemoryRepository<String>();
        r.save("a", "b");
    }
}
