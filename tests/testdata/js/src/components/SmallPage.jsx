export default function SmallPage({ title, subtitle, links = [], paragraphs = [], footer }) {
  return (
    <div className="small-page">
      <header className="page-header">
        <h1>{title}</h1>
        <p className="subtitle">{subtitle}</p>
      </header>
      <nav aria-label="Main">
        <ul>
          {links.map((link) => (
            <li key={link.href}>
              <a href={link.href}>{link.label}</a>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        {paragraphs.map((text, i) => (
          // eslint-disable-next-line react/no-array-index-key
          <p key={i} className={i === 0 ? 'lead' : undefined}>
            {text}
          </p>
        ))}
        <input type="checkbox" defaultChecked disabled />
        <br />
      </main>
      <footer style={{ color: '#666', marginTop: 12 }}>{footer}</footer>
    </div>
  );
}
