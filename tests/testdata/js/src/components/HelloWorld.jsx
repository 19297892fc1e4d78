export default function HelloWorld({ name }) {
  console.log('HelloWorld: rendering for', name);
  return (
    <div className="hello-world">
      <h3>Hello, {name}!</h3>
      <p>Rendered on the server by React {'<'}gorender fixture{'>'}.</p>
    </div>
  );
}
