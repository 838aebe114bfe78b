package symbolize

import "container/list"

// objectCache keeps objects under a byte budget, least recently used out
// first. An object is reachable through several keys (its file's
// dev/inode/size/mtime, its build id), and per-process mappings hold keys,
// never objects, so an evicted object's memory is really freed.
type objectCache struct {
	budget int
	used   int
	lru    list.List // of *object, most recent first
	byKey  map[string]*list.Element
}

func (c *objectCache) get(key string) *object {
	e := c.byKey[key]
	if e == nil {
		return nil
	}
	c.lru.MoveToFront(e)
	return e.Value.(*object)
}

// alias makes key lead to obj too.
func (c *objectCache) alias(key string, obj *object) {
	e := c.byKey[obj.keys[0]]
	if e == nil {
		return
	}
	obj.keys = append(obj.keys, key)
	c.byKey[key] = e
	c.used += len(key) + 16
}

// put adds obj and evicts the least recently used others until the budget
// holds; obj itself stays even if it alone is over the budget.
func (c *objectCache) put(obj *object) {
	e := c.lru.PushFront(obj)
	for _, k := range obj.keys {
		if old := c.byKey[k]; old != nil {
			c.remove(old)
		}
		c.byKey[k] = e
	}
	c.used += obj.bytes()
	for c.used > c.budget && c.lru.Len() > 1 {
		c.remove(c.lru.Back())
	}
}

func (c *objectCache) remove(e *list.Element) {
	obj := e.Value.(*object)
	for _, k := range obj.keys {
		if c.byKey[k] == e {
			delete(c.byKey, k)
		}
	}
	c.used -= obj.bytes()
	c.lru.Remove(e)
}
