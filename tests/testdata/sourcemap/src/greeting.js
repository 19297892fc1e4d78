// A component of the source-mapped fixture: greet throws for a missing user,
// from this file's line 8 (tests/sourcemap_test.go asserts that line).

export function greet(user) {
  if (user && user.name) {
    return '<p>Hello, ' + user.name + '</p>';
  }
  throw new Error('greet: no user given');
}
