export interface CartItem {
  sku: string;
  quantity: number;
  unitPrice: number;
}

export class ShoppingCart {
  private items: CartItem[] = [];

  add(item: CartItem): void {
    const existing = this.items.find((i) => i.sku === item.sku);
    if (existing) {
      existing.quantity += item.quantity;
    } else {
      this.items.push({ ...item });
    }
  }

  total(): number {
    return this.items.reduce((sum, i) => sum + i.quantity * i.unitPrice, 0);
  }
}

export function applyDiscount(total: number, percent: number): number {
  return Math.round(total * (1 - percent / 100) * 100) / 100;
}
