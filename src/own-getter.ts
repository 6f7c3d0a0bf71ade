/**
 * A descriptor for an own, enumerable getter, to define on each object of a class in its
 * constructor. A value made on first read (an AbortSignal, which costs microseconds in Node 20)
 * then still travels with a spread, `{ ...object }`, which a getter of the prototype would not;
 * and the one descriptor serves every object, with no closure per object.
 */
export function ownGetter<T, V>(read: (self: T) => V): PropertyDescriptor {
  return {
    get(this: T): V {
      return read(this);
    },
    enumerable: true,
    configurable: true,
  };
}
