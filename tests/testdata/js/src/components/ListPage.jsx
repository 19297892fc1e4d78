export default function ListPage({ items = [] }) {
  return (
    <section className="list-page">
      <h2>{items.length} items</h2>
      <ul className="items">
        {items.map((item) => (
          <li key={item.id} id={`item-${item.id}`} className="list-item" data-id={item.id}>
            <h4 className="item-title">{item.title}</h4>
            <p className="item-body">{item.body}</p>
          </li>
        ))}
      </ul>
    </section>
  );
}
